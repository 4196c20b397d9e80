import { readFileSync } from "node:fs";
import autocannon from "autocannon";
const { url, keys } = JSON.parse(readFileSync("/tmp/tk/keys.json", "utf8"));
const path = process.argv[2] ?? "/api/v1/icp/criteria";
let i = 0;
const r = await autocannon({ url: url + path, connections: 10, duration: Number(process.argv[3] ?? 10), pipelining: 1,
  requests: [{ method: "GET", setupRequest: (req) => ({ ...req, headers: { ...req.headers, authorization: `Bearer ${keys[i++ % keys.length]}` } }) }] });
console.log(path, "req/s", r.requests.average, "non2xx", r.non2xx, "p99", r.latency.p99);
