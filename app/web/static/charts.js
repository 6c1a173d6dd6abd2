// Draws every [data-chart] element from the JSON spec it names, with the self-hosted Plotly.js.
(function () {
  function draw() {
    document.querySelectorAll("[data-chart]").forEach(function (el) {
      var spec = JSON.parse(document.getElementById(el.dataset.chart).textContent);
      var config = { displaylogo: false, responsive: true};
      Plotly.newPlot(el, spec.data, spec.layout, config).then(function () { el.dataset.drawn = "1"; });
    });
  }
  if (document.fonts && document.fonts.ready) { document.fonts.ready.then(draw); } else { draw(); }
})();
