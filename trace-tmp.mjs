import { build } from "esbuild";
import { chromium } from "playwright-core";
const code = (process.env.HINT ? "//# allFunctionsCalledOnLoad\n" : "") + (await build({ entryPoints: ["tracker/src/track.ts"], bundle: true, minify: true, format: "iife", target: "es2020", write: false, tsconfigRaw: "{}" })).outputFiles[0].text;
const links = Array.from({length: 200}, (_, i) => `<li><a href="/x/${i}">item ${i}</a></li>`).join("");
const hidden = ["utm_source","utm_medium","utm_campaign","utm_content","utm_term","gclid","fbclid"].map(n => `<input type="hidden" name="${n}">`).join("");
const html = `<!doctype html><html><head><script src="https://ascribe.test/api/track.js" data-client="ck_bench0000000000"></script></head><body><ul>${links}</ul><form method="post"><input name="email" type="email">${hidden}</form><div class="calendly-inline-widget" data-url="https://calendly.com/acme"><iframe src="https://calendly.com/acme/intro?embed_domain=x"></iframe></div><a href="https://form.typeform.com/to/x">tf</a></body></html>`;
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox","--disable-gpu","--disable-background-networking"] });
const agg = new Map();
for (let run = 0; run < 8; run++) {
  const ctx = await browser.newContext({ ignoreHTTPSErrors: true });
  await ctx.route("**/*", (r) => { const u = r.request().url(); if (u.endsWith("track.js")) return r.fulfill({status:200, contentType:"text/javascript", body: code}); if (u.includes("collect")) return r.fulfill({status:204, body:""}); if (u.includes("calendly")) return r.fulfill({status:200, contentType:"text/html", body:"<p>cal</p>"}); return r.fulfill({ status: 200, contentType: "text/html", body: html }); });
  const page = await ctx.newPage();
  await browser.startTracing(page, { categories: ["devtools.timeline","disabled-by-default-devtools.timeline","v8","disabled-by-default-v8.compile","blink","blink.user_timing","disabled-by-default-v8.gc"] });
  await page.goto("https://www.shop.example.co.uk/offer?utm_source=facebook&utm_medium=paid&utm_campaign=Spring&utm_content=V3&utm_term=L&utm_ad_id=1&fbclid=IwAR0AbCdE");
  await page.waitForTimeout(1300);
  const events = JSON.parse((await browser.stopTracing()).toString()).traceEvents;
  await ctx.close();
  if (run < 2) continue;
  const ours = events.filter(e => e.ph === "X" && (e.name === "FunctionCall" || e.name === "EvaluateScript") && (e.args?.data?.url || "").includes("track.js"));
  for (const o of ours) {
    const kids = events.filter(e => e.ph === "X" && e.pid === o.pid && e.tid === o.tid && e.ts >= o.ts && e.ts + (e.dur||0) <= o.ts + o.dur && e !== o);
    const key0 = `${o.name}`; agg.set(key0, (agg.get(key0) || 0) + (o.tdur ?? o.dur));
    const byName = new Map(); for (const k of kids) byName.set(k.name, (byName.get(k.name) || 0) + (k.tdur ?? k.dur ?? 0));
    for (const [n, v] of byName) agg.set(`  ${o.name} > ${n}`, (agg.get(`  ${o.name} > ${n}`) || 0) + v);
  }
}
console.log([...agg].sort((a,b)=>b[1]-a[1]).slice(0,40).map(([k,v]) => `${(v/6/1000).toFixed(3)} ms ${k}`).join("\n"));
await browser.close();
