// Installs the Debian packages the tests drive (a real browser for the map page, each server host's web server for its configurations, Prometheus for the metrics file) before `npm test`
// runs them, so that `npm ci && npm test` passes on a fresh machine. Plain JavaScript: it runs before
// anything is compiled, and reads the hosts' needs from their records (Host.test in src/hosts/host.ts)
// through tsx, which npm ci installs. Without root or password-less sudo it stops with the one command to run.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { tsImport } from "tsx/esm/api";

const { HOSTS } = await tsImport("../src/hosts/index.ts", import.meta.url);

/** What the tests need: the program each test looks for (an environment variable may name another), and the Debian package that brings it. */
const NEEDED = [
  { program: process.env.MESH_API_CHROMIUM ?? "/usr/bin/chromium", pkg: "chromium", test: "test/map.test.ts" },
  // the web server each server host's test starts (Host.test.program)
  ...HOSTS.flatMap(({ test: { file, program } }) =>
    program ? [{ program: process.env[program.env] ?? program.path, pkg: program.debian, test: `test/${file}.test.ts` }] : [],
  ),
  // systemd-analyze verify checks docs/live.md's units (a container may come without systemd)
  { program: "/usr/bin/systemd-analyze", pkg: "systemd", test: "test/live-setup.test.ts" },
  // a real feed parser reads the Atom feeds (Debian's Python, not a pyenv one)
  { program: "/usr/lib/python3/dist-packages/feedparser/__init__.py", pkg: "python3-feedparser", test: "test/history.test.ts" },
  // promtool checks the metrics file, and a real Prometheus scrapes it (the package brings both)
  { program: process.env.MESH_API_PROMETHEUS ?? "/usr/bin/prometheus", pkg: "prometheus", test: "test/prometheus.test.ts" },
];

const missing = NEEDED.filter((n) => !existsSync(n.program));
if (missing.length === 0) process.exit(0);

const packages = missing.map((n) => n.pkg);
const root = typeof process.getuid === "function" && process.getuid() === 0;
const sudo = !root && spawnSync("sudo", ["-n", "true"], { stdio: "ignore" }).status === 0;
const install = `apt-get update && apt-get install -y --no-install-recommends ${packages.join(" ")}`;
if (!root && !sudo) {
  process.stderr.write(
    `npm test needs Debian packages (${missing.map((n) => `${n.pkg} for ${n.test}`).join(", ")}): run \`sudo sh -c '${install}'\`, then npm test again.\n`,
  );
  process.exit(1);
}

process.stderr.write(`npm test: installing Debian packages ${packages.join(", ")} (needed by ${missing.map((n) => n.test).join(", ")})\n`);
const prefix = root ? [] : ["sudo", "-n"];
const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
for (const args of [
  ["apt-get", "update", "-qq"],
  ["apt-get", "install", "-y", "-qq", "--no-install-recommends", ...packages],
]) {
  const cmd = [...prefix, ...args];
  const r = spawnSync(cmd[0], cmd.slice(1), { stdio: ["ignore", "ignore", "inherit"], env });
  if (r.status !== 0) {
    process.stderr.write(
      `npm test: \`${cmd.join(" ")}\` failed (exit ${r.status ?? r.signal}); install ${packages.join(" ")} by hand and run npm test again.\n`,
    );
    process.exit(1);
  }
}
const still = missing.filter((n) => !existsSync(n.program));
if (still.length > 0) {
  process.stderr.write(`npm test: ${still.map((n) => n.program).join(", ")} still missing after installing ${packages.join(" ")}.\n`);
  process.exit(1);
}
