import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { bodyText } from "../src/core/body.ts";
import { placeholderValues } from "../src/core/plan.ts";
import { UsageError } from "../src/core/problems.ts";
import { HOST_NAMES, HOSTS, hostNamed } from "../src/hosts/index.ts";
import { netlify } from "../src/hosts/netlify.ts";
import { EDGE_FUNCTION_FILE, edgeFunction, edgeToml } from "../src/hosts/netlify-edge.ts";
import { apacheConfig } from "../src/hosts/apache.ts";
import { nginxConfig } from "../src/hosts/nginx.ts";
import { caddyConfig } from "../src/hosts/caddy.ts";
import { validate } from "../src/pipeline.ts";
import { command, ROOT, tempDir } from "./support/tree.ts";
import { invocation } from "../src/cli/host-config.ts";

const DATA = path.join(ROOT, "data");

/** Command lines that do not depend on each other (each in this process, one after the other: support/tree.ts command). */
const clis = (...runs: string[][]) => Promise.all(runs.map((args) => command(args)));

describe("the host registry", () => {
  it("names each host once and finds it by name; an unknown name is a usage error listing the hosts", () => {
    expect(new Set(HOST_NAMES).size).toBe(HOSTS.length);
    expect(hostNamed("netlify")).toBe(netlify);
    expect(() => hostNamed("gopher")).toThrow(UsageError);
    expect(() => hostNamed("gopher")).toThrow(`the hosts available are ${HOST_NAMES.join(", ")}`);
  });

  it("the pipeline reports each host: its warnings are the host's limits, and the build holds the host's files", async () => {
    const dist = path.join(tempDir(), "dist");
    // the build runs while this process validates
    const building = command(["build", "--data", DATA, "--out", dist, "--default-status", "online"]);
    const r = await validate({ data: DATA });
    expect(Object.keys(r.hosts)).toEqual(HOST_NAMES);
    for (const host of HOSTS) expect(r.hosts[host.name].warnings).toEqual(host.limits(r.values!));
    expect(r.hostWarnings).toEqual(HOSTS.flatMap((h) => h.limits(r.values!)));
    const built = await building;
    expect(built.status, built.stderr).toBe(0);
    const values = placeholderValues((await validate({ data: DATA, settings: { defaultStatus: "online" } })).model!);
    for (const host of HOSTS)
      for (const file of host.files(values)) expect(readFileSync(path.join(dist, file.path), "utf8"), file.path).toBe(bodyText(file.body));
    // What build says of Netlify comes from the host, with the arguments that select this dump.
    // Run in the checkout (its netlify.toml is the committed generic rules), as the test runner runs it.
    const run = { mesh: invocation(), force: true };
    expect(built.stderr).toContain(netlify.built!(values, dist, `--data ${DATA} --default-status online`, run) + "\n");
    expect(built.stderr).toMatch(
      /netlify: [\d,]+ literal rules in .*\/_redirects; deploy with the netlify\.toml of `.*mesh-api.* netlify-config --data .* --default-status online --write --force`/,
    );
  });
});

describe("--folder-limit on the command line", () => {
  it("build splits the folders over it, says so in the host hint, and host-config --data prints the configuration of that layout", async () => {
    const dist = path.join(tempDir(), "dist");
    const built = await command(["build", "--data", DATA, "--out", dist, "--folder-limit", "2"]);
    expect(built.status, built.stderr).toBe(0);
    const values = placeholderValues((await validate({ data: DATA, settings: { folderLimit: 2 } })).model!);
    expect(values.layout.split).toContain("/api/v1/link/");
    const routing = JSON.parse(readFileSync(path.join(dist, "_mesh-api-routing.json"), "utf8")) as { split: string[] };
    expect(routing.split).toEqual(values.layout.split);
    // a link by id in its shard, and nothing of the flat place left
    const id = String((await validate({ data: DATA })).model!.links[0].id);
    expect(readFileSync(path.join(dist, `api/v1/link/~${id.slice(-2)}/${id}/index.json`), "utf8")).toContain(`"id":${id}`);
    expect(() => readFileSync(path.join(dist, `api/v1/link/${id}/index.json`))).toThrow();
    expect(built.stderr).toMatch(/netlify-config --data \S+ --folder-limit 2 --write/);
    const [split, flat, zero] = await clis(
      ["host-config", "nginx", "--data", DATA, "--folder-limit", "2"],
      ["host-config", "nginx", "--data", DATA],
      ["build", "--data", DATA, "--out", dist, "--folder-limit", "0"],
    );
    expect(split.status, split.stderr).toBe(0);
    expect(split.stdout).toBe(nginxConfig(values));
    expect(split.stdout).toContain("$mesh_shard");
    expect(flat.stdout).not.toContain("$mesh_shard");
    expect(zero.status).toBe(2);
  });
});

describe("mesh-api host-config", () => {
  it("netlify-edge --write writes the deploy's netlify.toml and the function beside it, replaces only its own files, and refuses before writing anything", async () => {
    const dir = tempDir();
    const fn = path.join(dir, EDGE_FUNCTION_FILE);
    const first = await command(["host-config", "netlify-edge", "--write", "netlify.toml", "-q"], dir);
    expect(first.status).toBe(0);
    expect(readFileSync(path.join(dir, "netlify.toml"), "utf8")).toBe(edgeToml());
    // (the CLI runs transpiled sources here: the same module, other paths in its comments than edgeFunction()'s)
    const written = readFileSync(fn, "utf8");
    expect(written.split("\n")[0]).toBe(edgeFunction().split("\n")[0]);
    // the same for a dump: nothing in either file grows with the data
    expect(
      (await command(["host-config", "netlify-edge", "--data", path.join(ROOT, "data"), "--write", "netlify.toml", "-q"], dir)).status,
    ).toBe(0);
    expect(readFileSync(fn, "utf8")).toBe(written);
    // a function of the user's is refused (exit 2), and the netlify.toml is not written either
    writeFileSync(fn, "// mine\n");
    writeFileSync(path.join(dir, "netlify.toml"), edgeToml().replace("dist", "public"));
    const refused = await command(["host-config", "netlify-edge", "--write", "netlify.toml"], dir);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain(`refusing to write to ${EDGE_FUNCTION_FILE}`);
    expect(readFileSync(fn, "utf8")).toBe("// mine\n");
    expect(readFileSync(path.join(dir, "netlify.toml"), "utf8")).toContain('publish = "public"');
    expect((await command(["host-config", "netlify-edge", "--write", "netlify.toml", "--force", "-q"], dir)).status).toBe(0);
    expect(readFileSync(fn, "utf8")).toBe(written);
  });

  it("netlify prints what netlify-config prints, byte for byte, with and without a dump", async () => {
    const sets = [[], ["--data", DATA], ["--data", DATA, "--default-status", "online"]];
    const runs = await clis(
      ...sets.flatMap((args) => [
        ["netlify-config", ...args],
        ["host-config", "netlify", ...args],
      ]),
    );
    for (const [i, args] of sets.entries()) {
      const [alias, named] = runs.slice(2 * i, 2 * i + 2);
      expect(alias.status, `${args.join(" ")}: ${alias.stderr}`).toBe(0);
      expect(named, args.join(" ")).toEqual(alias);
    }
    // without a dump: the generic rules the repository commits
    expect(runs[1].stdout).toBe(readFileSync(path.join(ROOT, "netlify.toml"), "utf8"));
  });

  it.each([
    ["nginx", nginxConfig, "listen 127.0.0.1:8181;", 'user "www-data" "web";'],
    ["apache", apacheConfig, "Listen 127.0.0.1:8181", 'User "www-data"\nGroup "web"'],
  ] as const)(
    "%s prints the block for a dump's server or virtual host, or with --standalone --root --port a configuration of its own; those options go together",
    async (name, config, listen, user) => {
      const values = placeholderValues((await validate({ data: DATA, settings: { defaultStatus: "online" } })).model!);
      // Started as root, the workers run as --user: <user>[:<group>], the group by default the user's name.
      const as = (u: string) => ["host-config", name, "--standalone", "--root", "/srv/dist", "--port", "8181", "--user", u, "-q"];
      const [block, alone, noRoot, noStandalone, withGroup, withUser, badUser, userAlone] = await clis(
        ["host-config", name, "--data", DATA, "--default-status", "online", "-q"],
        ["host-config", name, "--data", DATA, "--default-status", "online", "--standalone", "--root", "/srv/dist", "--port", "8181", "-q"],
        ["host-config", name, "--standalone", "--port", "8181"],
        ["host-config", name, "--root", "/srv/dist"],
        as("www-data:web"),
        as("www-data"),
        as("a:b:c"),
        ["host-config", name, "--user", "www-data"],
      );
      expect([block.status, block.stdout]).toEqual([0, config(values)]);
      expect([alone.status, alone.stdout]).toEqual([0, config(values, { standalone: { root: "/srv/dist", port: 8181 } })]);
      expect(alone.stdout).toContain(listen);
      expect(noRoot).toMatchObject({ status: 2, stderr: expect.stringContaining("--standalone needs --root") });
      expect(noStandalone).toMatchObject({ status: 2, stderr: expect.stringContaining("--root, --port and --user are for --standalone") });
      expect(withGroup.stdout).toContain(user);
      expect(withUser.stdout).toContain(user.replace("web", "www-data"));
      expect(badUser).toMatchObject({ status: 2, stdout: "", stderr: expect.stringContaining("--user takes <user> or <user>:<group>") });
      expect(userAlone).toMatchObject({ status: 2, stdout: "" });
    },
  );

  it("caddy prints the route for a dump's site block, or with --standalone --root --port a Caddyfile of its own; those options go together", async () => {
    const values = placeholderValues((await validate({ data: DATA })).model!);
    const [block, alone, noRoot, noStandalone, user, quote] = await clis(
      ["host-config", "caddy", "--data", DATA, "-q"],
      ["host-config", "caddy", "--data", DATA, "--standalone", "--root", "/srv/dist", "--port", "8181", "-q"],
      ["host-config", "caddy", "--standalone", "--port", "8181"],
      ["host-config", "caddy", "--root", "/srv/dist"],
      ["host-config", "caddy", "--standalone", "--root", "/srv/dist", "--port", "8181", "--user", "www-data"],
      ["host-config", "caddy", "--standalone", "--root", "/srv/a`b", "--port", "8181"],
    );
    expect([block.status, block.stdout]).toEqual([0, caddyConfig(values)]);
    expect(block.stdout).toMatch(/^# Generated by `mesh-api host-config caddy`[^]*\nroute \{\n/);
    expect([alone.status, alone.stdout]).toEqual([0, caddyConfig(values, { standalone: { root: "/srv/dist", port: 8181 } })]);
    expect(alone.stdout).toContain("http://127.0.0.1:8181 {\n\tbind 127.0.0.1\n\troot * `/srv/dist`\n");
    expect(alone.stdout).toContain("\tadmin off\n\tauto_https off\n");
    expect(noRoot).toMatchObject({ status: 2, stderr: expect.stringContaining("--standalone needs --root") });
    expect(noStandalone).toMatchObject({ status: 2, stderr: expect.stringContaining("--root, --port and --user are for --standalone") });
    expect(user).toMatchObject({ status: 2, stdout: "", stderr: expect.stringContaining("this server does not change its user") });
    expect(quote).toMatchObject({ status: 2 });
  });

  it("a host not implemented is a usage error naming the hosts available, from the registry", async () => {
    // Names no registry will hold (a path, a shell word, a letter case of a host's), each tried: none is skipped.
    const names = ["gopher", "../nginx", "nginx;id", HOST_NAMES[0].toUpperCase()];
    expect(names.filter((n) => HOST_NAMES.includes(n))).toEqual([]);
    const runs = await clis(...names.map((name) => ["host-config", name, "--data", DATA]));
    for (const [i, name] of names.entries()) {
      const r = runs[i];
      expect(r.status).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain(`'${name}'`);
      for (const available of HOST_NAMES) expect(r.stderr).toContain(available);
    }
  });

  it("options for a server are a usage error for Netlify, before any output", async () => {
    const sets = [["--standalone"], ["--root", "dist", "--port", "8080"], ["--user", "www-data"]];
    const runs = await clis(...sets.map((args) => ["host-config", "netlify", "--data", DATA, ...args]));
    for (const r of runs) {
      expect(r.status).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(/^mesh-api: Netlify serves a deploy itself: --/);
    }
  });

  it("--write <file> writes what it prints, replaces a file it wrote, and keeps a file of yours without --force", async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, "mine.toml"), "# mine\n");
    const mine = path.join(dir, "mine.toml");
    const [{ stdout: printed }, refused] = await clis(
      ["host-config", "netlify", "--data", DATA, "-q"],
      ["host-config", "netlify", "--data", DATA, "--write", mine],
    );
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/^mesh-api: refusing to write to .*mine\.toml: it was not generated by mesh-api; /);
    expect(readFileSync(mine, "utf8")).toBe("# mine\n");
    expect(await command(["host-config", "netlify", "--data", DATA, "--write", mine, "--force", "-q"])).toMatchObject({
      status: 0,
      stdout: "",
    });
    expect(readFileSync(mine, "utf8")).toBe(printed);
    // Its own file: replaced by the generic rules, and those not by a dump's without --force.
    expect((await command(["host-config", "netlify", "--write", mine])).status).toBe(0);
    expect(readFileSync(mine, "utf8")).toBe(readFileSync(path.join(ROOT, "netlify.toml"), "utf8"));
    const generic = await command(["host-config", "netlify", "--data", DATA, "--write", mine]);
    expect(generic.status).toBe(2);
    expect(generic.stderr).toMatch(/it holds the generic rules a repository commits .*git checkout .*mine\.toml puts them back/);
  });
});
