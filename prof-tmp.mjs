import { build } from "esbuild";
import { chromium } from "playwright-core";
const code = (await build({ entryPoints: ["tracker/src/track.ts"], bundle: true, minify: false, format: "iife", target: "es2020", write: false, tsconfigRaw: "{}" })).outputFiles[0].text;
const links = Array.from({length: 200}, (_, i) => `<li><a href="/x/${i}">item ${i}</a></li>`).join("");
const hidden = ["utm_source","utm_medium","utm_campaign","utm_content","utm_term","gclid","fbclid"].map(n => `<input type="hidden" name="${n}">`).join("");
const html = `<!doctype html><html><head><script src="https://ascribe.test/api/track.js" data-client="ck_bench0000000000"></script></head><body><ul>${links}</ul><form method="post"><input name="email" type="email">${hidden}</form><div class="calendly-inline-widget" data-url="https://calendly.com/acme"><iframe src="https://calendly.com/acme/intro?embed_domain=x"></iframe></div><a href="https://form.typeform.com/to/x">tf</a></body></html>`;
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox","--disable-gpu","--disable-background-networking"] });
const totals = {};
for (let run = 0; run < 8; run++) {
  const ctx = await browser.newContext({ ignoreHTTPSErrors: true });
  await ctx.route("**/*", (r) => { const u = r.request().url(); if (u.endsWith("track.js")) return r.fulfill({status:200, contentType:"text/javascript", body: code}); if (u.includes("collect")) return r.fulfill({status:204, body:""}); if (u.includes("calendly")) return r.fulfill({status:200, contentType:"text/html", body:"<p>cal</p>"}); return r.fulfill({ status: 200, contentType: "text/html", body: html }); });
  const page = await ctx.newPage();
  const cdp = await ctx.newCDPSession(page);
  await cdp.send("Profiler.enable"); await cdp.send("Profiler.setSamplingInterval", { interval: 20 }); await cdp.send("Profiler.start");
  await page.goto("https://www.shop.example.co.uk/offer?utm_source=facebook&utm_medium=paid&utm_campaign=Spring&utm_content=V3&utm_term=L&utm_ad_id=1&fbclid=IwAR0AbCdE");
  await page.waitForTimeout(1300);
  const { profile } = await cdp.send("Profiler.stop");
  if (run < 2) { await ctx.close(); continue; }
  // self time per function of track.js
  const byId = new Map(profile.nodes.map(n => [n.id, n]));
  const dt = profile.timeDeltas; const self = new Map();
  profile.samples.forEach((id, i) => { const n = byId.get(id); const key = n.callFrame.url.includes("track.js") ? `${n.callFrame.functionName || "(anon)"}:${n.callFrame.lineNumber}` : n.callFrame.functionName || n.callFrame.url.slice(0,30) || "(native)"; self.set(key, (self.get(key) || 0) + (dt[i] || 0)); });
  // inclusive per track.js frames: walk parents
  const parent = new Map(); for (const n of profile.nodes) for (const c of n.children || []) parent.set(c, n.id);
  const incl = new Map();
  profile.samples.forEach((id, i) => { const seen = new Set(); let cur = id; while (cur) { const n = byId.get(cur); if (n.callFrame.url.includes("track.js")) { const k = `${n.callFrame.functionName || "(anon)"}:${n.callFrame.lineNumber}`; if (!seen.has(k)) { seen.add(k); incl.set(k, (incl.get(k) || 0) + (dt[i] || 0)); } } cur = parent.get(cur); } });
  for (const [k, v] of incl) totals[k] = (totals[k] || 0) + v / 6;
  profile.samples.forEach((id, i) => { let cur = id; let under = false; while (cur) { const n = byId.get(cur); if (n.callFrame.url.includes("track.js")) { under = true; break; } cur = parent.get(cur); } if (under) { const n = byId.get(id); const k = "SELF " + (n.callFrame.functionName || "(native)") + (n.callFrame.url.includes("track.js") ? ":" + n.callFrame.lineNumber : ""); totals[k] = (totals[k] || 0) + (dt[i] || 0) / 6; } });
  // also self times of native funcs called under track.js
  await ctx.close();
}
console.log(Object.entries(totals).sort((a,b)=>b[1]-a[1]).slice(0,30).map(([k,v]) => `${(v/1000).toFixed(2)} ms  ${k}`).join("\n"));
await browser.close();
