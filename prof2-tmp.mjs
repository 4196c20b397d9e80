import { build } from "esbuild";
import { chromium } from "playwright-core";
const code = (await build({ entryPoints: ["tracker/src/_prof.ts"], bundle: true, minify: true, format: "iife", target: "es2020", write: false, tsconfigRaw: "{}" })).outputFiles[0].text;
const links = Array.from({length: 200}, (_, i) => `<li><a href="/x/${i}">item ${i}</a></li>`).join("");
const hidden = ["utm_source","utm_medium","utm_campaign","utm_content","utm_term","gclid","fbclid"].map(n => `<input type="hidden" name="${n}">`).join("");
const html = `<!doctype html><html><head><script src="https://ascribe.test/api/track.js" data-client="ck_bench0000000000"></script></head><body><ul>${links}</ul><form method="post"><input name="email" type="email">${process.env.NOHIDDEN ? "" : hidden}</form>${process.env.NOIFRAME ? "" : `<div class="calendly-inline-widget" data-url="https://calendly.com/acme"><iframe src="https://calendly.com/acme/intro?embed_domain=x"></iframe></div>`}<a href="https://form.typeform.com/to/x">tf</a></body></html>`;
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox","--disable-gpu","--disable-background-networking"] });
const acc = {};
for (let run = 0; run < 12; run++) {
  const ctx = await browser.newContext({ ignoreHTTPSErrors: true });
  await ctx.route("**/*", (r) => { const u = r.request().url(); if (u.endsWith("track.js")) return r.fulfill({status:200, contentType:"text/javascript", body: code}); if (u.includes("collect")) return r.fulfill({status:204, body:""}); if (u.includes("calendly")) return r.fulfill({status:200, contentType:"text/html", body:"<p>cal</p>"}); return r.fulfill({ status: 200, contentType: "text/html", body: html }); });
  const page = await ctx.newPage();
  await page.goto("https://www.shop.example.co.uk/offer?utm_source=facebook&utm_medium=paid&utm_campaign=Spring&utm_content=V3&utm_term=L&utm_ad_id=1&fbclid=IwAR0AbCdE");
  await page.waitForTimeout(300);
  const T = await page.evaluate(() => globalThis.__T);
  if (run >= 2) for (let i = 1; i < T.length; i++) (acc[T[i][0]] ||= []).push(T[i][1] - T[i-1][1]);
  await ctx.close();
}
for (const [k, v] of Object.entries(acc)) { v.sort((a,b)=>a-b); console.log(k.padEnd(16), v[v.length>>1].toFixed(3), "ms median"); }
await browser.close();
