// The catalogs (../locales/*.json), without a browser: every language has every key (a
// plural has the forms its language needs), placeholders match, every key the code names
// exists, and no word a person reads is written in the code instead of a catalog (the
// ESLint rule i18next/no-literal-string, which the lint step runs, is on for every view).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { ESLint } from "eslint";

const ui = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const LANGS = ["en", "zh-Hant", "zh-Hans"];
const catalog = (l) => JSON.parse(readFileSync(join(ui, "../locales", `${l}.json`), "utf8"));

function flat(o, pre = "", out = {}) {
  for (const [k, v] of Object.entries(o)) {
    if (v && typeof v === "object") flat(v, `${pre}${k}.`, out);
    else out[`${pre}${k}`] = v;
  }
  return out;
}

const PLURAL = /_(zero|one|two|few|many|other)$/;
/// Keys with their plural forms folded into one ("records_one", "records_other" → "records").
function bases(c) {
  const out = new Map();
  for (const [k, v] of Object.entries(flat(c))) {
    const base = k.replace(PLURAL, "");
    const forms = out.get(base) ?? {};
    forms[PLURAL.test(k) ? k.match(PLURAL)[1] : ""] = v;
    out.set(base, forms);
  }
  return out;
}

const placeholders = (s) => new Set([...String(s).matchAll(/\{\{\s*([\w.]+)\s*\}\}/g)].map((m) => m[1]));

test("every language has every key, with the plural forms it needs and the same placeholders", () => {
  const [en, ...others] = LANGS.map((l) => bases(catalog(l)));
  const problems = [];
  for (const [i, other] of others.entries()) {
    const lang = LANGS[i + 1];
    for (const [key, forms] of en) {
      const theirs = other.get(key);
      if (!theirs) {
        problems.push(`${lang}: missing ${key}`);
        continue;
      }
      const plural = !("" in forms);
      // Chinese has one plural form, "other"; English needs "one" and "other".
      if (plural && !("other" in theirs)) problems.push(`${lang}: ${key} lacks its _other form`);
      if (!plural && !("" in theirs)) problems.push(`${lang}: ${key} should not be a plural`);
      const want = placeholders(Object.values(forms).join(" "));
      want.delete("count");
      const got = placeholders(Object.values(theirs).join(" "));
      got.delete("count");
      if ([...want].sort().join() !== [...got].sort().join())
        problems.push(`${lang}: ${key} has {{${[...got]}}}, English {{${[...want]}}}`);
    }
    for (const key of other.keys()) if (!en.has(key)) problems.push(`${lang}: ${key} is not in en.json`);
  }
  for (const [key, forms] of en)
    if (!("" in forms) && !("one" in forms && "other" in forms)) problems.push(`en: ${key} needs _one and _other`);
  assert.deepEqual(problems, []);
});

function sources(dir, out = []) {
  for (const f of readdirSync(dir)) {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) sources(p, out);
    else if (/\.tsx?$/.test(f) && !/bindings|commands/.test(f)) out.push(p);
  }
  return out;
}

test("every key the code names is in the English catalog", () => {
  const keys = bases(catalog("en"));
  const missing = [];
  for (const f of sources(join(ui, "src"))) {
    const src = readFileSync(f, "utf8");
    for (const m of src.matchAll(/\bt\(\s*"([a-z_]+\.[\w.]+)"/g)) if (!keys.has(m[1].replace(PLURAL, ""))) missing.push(`${f}: ${m[1]}`);
    for (const m of src.matchAll(/i18nKey="([\w.]+)"/g)) if (!keys.has(m[1])) missing.push(`${f}: ${m[1]}`);
  }
  assert.deepEqual(missing, []);
});

test("no word a person reads is written in the code: notifications and JSX come from the catalogs", async () => {
  // The JSX rules run once, in the lint stage (`npm run lint`: ESLint over src/, no warning
  // allowed), with type information; linting every view again here took over a minute. What
  // this checks is that they are errors for every file whose words come from the catalogs,
  // and that the lint stage lints those files.
  const eslint = new ESLint({ cwd: ui });
  const { NOT_YET_TRANSLATED } = await import(join(ui, "eslint.config.js"));
  const views = sources(join(ui, "src")).filter((f) => f.endsWith(".tsx") && !NOT_YET_TRANSLATED.some((n) => f.endsWith(n)));
  assert.ok(views.length > 20, `the views under src/ (${views.length})`);
  const notErrors = [];
  for (const f of views) {
    const { rules } = await eslint.calculateConfigForFile(f);
    for (const rule of ["i18next/no-literal-string", "hsmc/no-backend-english"]) {
      const level = [rules?.[rule]].flat()[0];
      if (level !== 2 && level !== "error") notErrors.push(`${f}: ${rule} is ${level ?? "off"}`);
    }
  }
  assert.deepEqual(notErrors, []);
  const lint = JSON.parse(readFileSync(join(ui, "package.json"), "utf8")).scripts.lint;
  assert.match(lint, /^eslint --max-warnings 0 src\b/);
  // Notifications are strings passed to a function, which the JSX rule does not see.
  const toasts = [];
  for (const f of sources(join(ui, "src")).filter((f) => !NOT_YET_TRANSLATED.some((n) => f.endsWith(n)))) {
    const src = readFileSync(f, "utf8");
    for (const m of src.matchAll(/\btoast\(\s*"(ok|error|info)",\s*[`"']|errorToast:\s*[`"']/g)) toasts.push(`${f}: ${m[0]}`);
  }
  assert.deepEqual(toasts, []);
});

test("the backend's English is not rendered where a Text comes with it (hsmc/no-backend-english)", () => {
  // A view as it must not be written, linted from memory in a process of its own (the
  // type-aware rule asks TypeScript for the fields' types; typescript-eslint keeps one
  // project service per process, so the probe outside the tsconfig's files is let in there).
  const probe = "src/views/__rule_probe__.tsx";
  const src = `import type { DriftReport, Finding, HaGroupView, Text } from "../bindings";
import { useTranslation } from "react-i18next";
export function Probe({ r, f, g, x }: { r: DriftReport; f: Finding; g: HaGroupView; x: Text }) {
  const { t } = useTranslation();
  return (
    <div key={r.summary} data-kind={f.kind} title={g.warning ?? ""}>
      {r.summary}
      {t("ha.field_differs", { field: r.differences[0]?.field })}
      {f.kind}
      {x.text}
      {r.summary_text ? "" : r.summary}
      {r.summary && <span />}
    </div>
  );
}
`;
  const script = `
import { ESLint } from "eslint";
const eslint = new ESLint({
  cwd: process.cwd(),
  overrideConfig: {
    files: ["src/**/*.tsx"],
    languageOptions: { parserOptions: { projectService: { allowDefaultProject: [${JSON.stringify(probe)}] }, tsconfigRootDir: process.cwd() } },
  },
});
const [res] = await eslint.lintText(${JSON.stringify(src)}, { filePath: ${JSON.stringify(probe)} });
console.log(JSON.stringify(res.messages.map((m) => \`\${m.ruleId ?? "parse"} \${m.line}:\${m.message.split(" ")[0]}\`)));
`;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: ui, encoding: "utf8" });
  assert.deepEqual(JSON.parse(out), [
    "hsmc/no-backend-english 6:'warning'",
    "hsmc/no-backend-english 7:'summary'",
    "hsmc/no-backend-english 8:'field'",
    "hsmc/no-backend-english 9:'Finding.kind'",
    "hsmc/no-backend-english 10:'Text.text'",
  ]);
});
