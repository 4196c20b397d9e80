// The overview's daily chart, drawn by uPlot from the JSON block the server rendered beside it.

(() => {
  const host = document.getElementById("daily-chart");
  const source = document.getElementById("daily-chart-data");
  if (!host || !source || typeof uPlot === "undefined") return;
  const chart = JSON.parse(source.textContent || "{}");
  const days = chart.days.map((d) => Date.parse(`${d}T12:00:00Z`) / 1000);
  const colors = ["#2563eb", "#16a34a", "#9333ea", "#dc2626"];
  const money = new Intl.NumberFormat("en-US", {
    style: "currency",
    currency: chart.currency,
    maximumFractionDigits: 0,
  });
  const options = {
    width: Math.max(300, host.clientWidth),
    height: 280,
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "UTC"),
    series: [
      {},
      ...chart.series.map((s, i) => ({
        label: s.label,
        stroke: colors[i % colors.length],
        width: 2,
        scale: s.axis,
        value: (_u, v) => (v == null ? "—" : s.axis === "money" ? money.format(v) : String(v)),
      })),
    ],
    axes: [
      {},
      { scale: "count", label: "Leads, sales" },
      {
        scale: "money",
        side: 1,
        label: "Revenue, spend",
        grid: { show: false },
        values: (_u, vals) => vals.map((v) => money.format(v)),
      },
    ],
  };
  const plot = new uPlot(options, [days, ...chart.series.map((s) => s.values)], host);
  new ResizeObserver(() => plot.setSize({ width: Math.max(300, host.clientWidth), height: 280 })).observe(
    host,
  );
})();
