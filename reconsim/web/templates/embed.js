(function () {
  // Data marks drawn (role "mark", outside axes, legends and titles), SVG or canvas alike.
  function countMarks(mark) {
    let n = 0;
    (mark.items || []).forEach(function (item) {
      if (mark.marktype === "group") {
        (item.items || []).forEach(function (child) { n += countMarks(child); });
      } else if (mark.role === "mark") {
        n += 1;
      }
    });
    return n;
  }
  const charts = Array.from(document.querySelectorAll("div.chart"));
  const jobs = charts.map(function (el) {
    const spec = JSON.parse(document.getElementById("spec-" + el.dataset.figure).textContent);
    return vegaEmbed(el, spec, {renderer: el.dataset.renderer || "svg", actions: false})
      .then(function (result) {
        el.dataset.marks = String(countMarks(result.view.scenegraph().root));
        el.dataset.rendered = "yes";
      });
  });
  Promise.allSettled(jobs).then(function (results) {
    const failed = results.filter(function (r) { return r.status === "rejected"; });
    failed.forEach(function (r) { console.error("chart failed to render:", r.reason); });
    document.body.dataset.charts = failed.length ? "failed" : "rendered";
  });
})();
