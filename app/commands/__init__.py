"""One module per command, each exposing ``register(app)``.

These are the command-line edge: a command imports the library modules it runs inside its body, so
``evaluator --help`` (and every other command) does not pay for torch, transformers or the fund engine it
does not use. Everywhere below this edge, project modules are imported at the top of the file.
"""
