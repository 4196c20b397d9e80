import { chromium } from "playwright-core";
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox","--disable-gpu","--disable-background-networking"] });
for (const mode of ["attr", "attr", "replace", "replace", "attrDCL", "attrDCL", "lazyAttrDCL"]) {
  const ctx = await browser.newContext({ ignoreHTTPSErrors: true });
  await ctx.route("**/*", (r) => { const u = r.request().url(); if (u.includes("calendly")) return r.fulfill({status:200, contentType:"text/html", body:"<p>cal</p>"}); return r.fulfill({ status: 200, contentType: "text/html", body: `<!doctype html><script>
  document.addEventListener("DOMContentLoaded", () => { if (!"${mode}".includes("DCL")) return; const f = document.querySelector("iframe"); const s = performance.now(); f.setAttribute("src", f.src + "&utm_source=x"); window.__dcl = performance.now() - s; });
  </script><iframe ${mode.startsWith("lazy") ? 'loading="lazy" style="margin-top:3000px"' : ""} src="https://calendly.com/acme?embed_domain=x"></iframe>` }); });
  const page = await ctx.newPage();
  await page.goto("https://www.shop.example.co.uk/");
  await page.waitForTimeout(300);
  const r = await page.evaluate((mode) => {
    if (mode.includes("DCL")) return window.__dcl;
    const f = document.querySelector("iframe"); const s = performance.now();
    if (mode === "attr") f.setAttribute("src", f.src + "&utm_source=x"); else f.contentWindow.location.replace(f.src + "&utm_source=y");
    return performance.now() - s;
  }, mode);
  console.log(mode, r.toFixed(2), "ms");
  await ctx.close();
}
await browser.close();
