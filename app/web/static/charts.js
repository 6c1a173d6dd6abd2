// Draws every [data-chart] element from the JSON spec it names, with the self-hosted Plotly.js.
// Plotly (1.2 MB compressed) and its two stylesheets are fetched only when the page holds a chart:
// a page may include this script and still cost nothing if its charts were left out (a fund not rated).
(function () {
  var me = document.currentScript;
  if (!document.querySelector("[data-chart]")) { return; }

  function sheet(href, id) {  // Plotly finds these by id and adds no inline <style> (the CSP forbids one)
    return new Promise(function (done) {
      if (!href) { done(); return; }
      var link = document.createElement("link");
      link.rel = "stylesheet"; link.href = href; if (id) { link.id = id; }
      link.onload = link.onerror = function () { done(); };
      document.head.appendChild(link);
    });
  }

  // The web font comes in unicode-range slices, fetched for the characters a page shows: a chart's labels
  // may need slices the page's text did not, and Plotly sizes its margins and tick angles from the text
  // as first drawn. So the slices for the chart's own text are loaded before it is drawn.
  function glyphs(spec) {
    var font = (spec.layout && spec.layout.font) || {};
    if (!document.fonts || !document.fonts.load || !font.family) { return Promise.resolve(); }
    return document.fonts.load((font.size || 13) + "px " + font.family, JSON.stringify(spec))
      .catch(function () {});
  }

  function draw() {
    document.querySelectorAll("[data-chart]").forEach(function (el) {
      var spec = JSON.parse(document.getElementById(el.dataset.chart).textContent);
      var config = { displaylogo: false, responsive: true};
      glyphs(spec).then(function () {
        return Plotly.newPlot(el, spec.data, spec.layout, config);
      }).then(function () { el.dataset.drawn = "1"; });
    });
  }

  var fonts = document.fonts && document.fonts.ready ? document.fonts.ready : Promise.resolve();
  Promise.all([sheet(me.dataset.style, me.dataset.styleId),
               sheet(me.dataset.rules, "plotly.js-style-global")]).then(function () {
    var script = document.createElement("script");
    script.src = me.dataset.plotly;
    script.onload = function () { fonts.then(draw); };
    document.body.appendChild(script);
  });
})();
