// Starts the real Switchyard server (bin/switchyard, built by `make build`)
// on a free port against a scratch PostgreSQL database, serving ../public.
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const adminURL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable";

function psql(sql, url = adminURL) {
  execFileSync("psql", ["-X", "-q", "-v", "ON_ERROR_STOP=1", url, "-c", sql], { stdio: ["ignore", "ignore", "inherit"] });
}

export async function freePort() {
  const srv = net.createServer().listen(0, "127.0.0.1");
  await once(srv, "listening");
  const { port } = srv.address();
  srv.close();
  return port;
}

async function waitHealthy(url, child, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      const res = await fetch(url + "/health");
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("server did not become healthy in time");
}

// startServer takes an optional port (for a PUBLIC_URL known before it
// starts) and environment variables to add.
export async function startServer({ port: chosen, env = {} } = {}) {
  const db = `switchyard_e2e_${process.pid}_${Date.now()}`;
  psql(`CREATE DATABASE ${db}`);
  const dbURL = new URL(adminURL);
  dbURL.pathname = "/" + db;
  const port = chosen ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const log = [];
  const child = spawn(path.join(root, "bin/switchyard"), [], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      DATABASE_URL: dbURL.toString(),
      REDIS_URL: "", // the in-process bus: one instance
      COOKIE_SECURE: "false",
      PUBLIC_DIR: path.join(root, "public"),
      RUST_LOG: "warn",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout.on("data", (d) => log.push(String(d)));
  child.stderr.on("data", (d) => log.push(String(d)));
  try {
    await waitHealthy(url, child);
  } catch (err) {
    child.kill("SIGKILL");
    psql(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    throw new Error(`${err.message}\n${log.join("")}`);
  }
  return {
    url,
    log,
    // sql runs one statement in the server's database: only for what no API
    // can do, such as a flag that has not changed for a week.
    sql: (statement) => psql(statement, dbURL.toString()),
    async stop() {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await once(child, "exit");
      }
      psql(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    },
  };
}
