import { build } from "esbuild";
import { chromium } from "playwright-core";
const code = (await build({ entryPoints: ["tracker/src/track.ts"], bundle: true, minify: false, format: "iife", target: "es2020", write: false, tsconfigRaw: "{}" })).outputFiles[0].text;
const lines = code.split("\n");
const links = Array.from({length: 200}, (_, i) => `<li><a href="/x/${i}">item ${i}</a></li>`).join("");
const hidden = ["utm_source","utm_medium","utm_campaign","utm_content","utm_term","gclid","fbclid"].map(n => `<input type="hidden" name="${n}">`).join("");
const html = `<!doctype html><html><head><script src="https://ascribe.test/api/track.js" data-client="ck_bench0000000000"></script></head><body><ul>${links}</ul><form method="post"><input name="email" type="email">${hidden}</form><div class="calendly-inline-widget" data-url="https://calendly.com/acme"><iframe src="https://calendly.com/acme/intro?embed_domain=x"></iframe></div><a href="https://form.typeform.com/to/x">tf</a></body></html>`;
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox","--disable-gpu","--disable-background-networking"] });
const ticks = new Map();
for (let run = 0; run < 14; run++) {
  const ctx = await browser.newContext({ ignoreHTTPSErrors: true });
  await ctx.route("**/*", (r) => { const u = r.request().url(); if (u.endsWith("track.js")) return r.fulfill({status:200, contentType:"text/javascript", body: code}); if (u.includes("collect")) return r.fulfill({status:204, body:""}); if (u.includes("calendly")) return r.fulfill({status:200, contentType:"text/html", body:"<p>cal</p>"}); return r.fulfill({ status: 200, contentType: "text/html", body: html }); });
  const page = await ctx.newPage();
  const cdp = await ctx.newCDPSession(page);
  await cdp.send("Profiler.enable"); await cdp.send("Profiler.setSamplingInterval", { interval: 25 }); await cdp.send("Profiler.start");
  await page.goto("https://www.shop.example.co.uk/offer?utm_source=facebook&utm_medium=paid&utm_campaign=Spring&utm_content=V3&utm_term=L&utm_ad_id=1&fbclid=IwAR0AbCdE");
  await page.waitForTimeout(1300);
  const { profile } = await cdp.send("Profiler.stop");
  await ctx.close();
  if (run < 2) continue;
  const byId = new Map(profile.nodes.map(n => [n.id, n]));
  const dt = new Map(); profile.samples.forEach((id, i) => dt.set(id, (dt.get(id) || 0) + 1));
  for (const n of profile.nodes) if (n.callFrame.url.includes("track.js")) {
    for (const pt of n.positionTicks || []) ticks.set(pt.line, (ticks.get(pt.line) || 0) + pt.ticks);
  }
}
const total = [...ticks.values()].reduce((a,b)=>a+b,0);
console.log("total ticks", total, "≈", (total*0.025/12).toFixed(2), "ms per load");
console.log([...ticks].sort((a,b)=>b[1]-a[1]).slice(0,25).map(([l,t]) => `${(t*0.025/12).toFixed(3)} ms  L${l}: ${lines[l-1].trim().slice(0,110)}`).join("\n"));
await browser.close();
