"""The web app: server-rendered pages (Jinja2) beside the API, on the same keys and scoped queries.

Extension points for more pages (see :mod:`evaluator.app.web.extensions`):
- ``create_web_app(..., extensions=[PageSet(router, nav=(NavLink(...),), templates=folder)])``, or add a
  PageSet to ``default_extensions()`` so ``evaluator serve`` includes it;
- page dependencies in :mod:`evaluator.app.web.auth`: ``require_user`` (any signed-in key: a client sees
  only its scope through ``viewer.principal``), ``require_admin`` (admin keys; others get the 404 page),
  ``db`` (a SQLAlchemy session) and ``check_csrf`` (for forms that change anything);
- ``render(request, "page.html", {...})`` in :mod:`evaluator.app.web.render`; templates extend
  ``base.html`` and fill ``{% block content %}`` (and optionally ``title``, ``head``, ``scripts``).
"""
