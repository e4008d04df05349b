// Lint the UI and its tests: TypeScript-aware rules, React hooks rules.
import js from "@eslint/js";
import globals from "globals";
import i18next from "eslint-plugin-i18next";
import reactHooks from "eslint-plugin-react-hooks";
import tseslint from "typescript-eslint";
import noBackendEnglish from "./eslint-rules/no-backend-english.js";

/// The files whose words come from the catalogs: all of the UI but the views below.
export const TRANSLATED = ["src/**/*.tsx"];

/// Views still in English while they move to the catalogs, listed so that no other file
/// gains a literal string meanwhile. Empty: every view is translated; a view added here
/// must say why and be moved soon (tests/ui/i18n.test.mjs skips the files listed).
/** @type {string[]} */
export const NOT_YET_TRANSLATED = [];

/// What the literal-string rule looks at: JSX text and the attributes a person reads.
export const LITERAL_STRINGS = {
  mode: "jsx-only",
  // t/tr translate; toast's text is a t() call (tests/ui/i18n.test.mjs checks), its kind is not text.
  callees: { exclude: ["i18n(ext)?", "t", "tr", "toast", "require", "includes", "indexOf", "endsWith", "startsWith"] },
  "jsx-attributes": {
    exclude: [
      "className",
      "style",
      "type",
      "key",
      "id",
      "role",
      "name",
      "value",
      "tone",
      "kind",
      "lang",
      "autoComplete",
      "inputMode",
      "accept",
      "rel",
      "target",
      "href",
      "src",
      "align",
      "textAnchor",
      "fontWeight",
      "fontFamily",
      "fill",
      "stroke",
      "strokeDasharray",
      "transform",
      "viewBox",
      "xmlns",
      "points",
      "i18nKey",
      "testId",
      "rowTestId",
      "testid",
      "data-testid",
      "exportName",
      "data-.*",
      "aria-live",
      "aria-current",
      "aria-hidden",
      "aria-modal",
    ],
  },
  words: {
    exclude: [
      "[0-9!-/:-@[-`{-~\\s·×…—→←↑↓]+",
      "[A-Z0-9_-]+",
      "Luna",
      "Cryptoki",
      "p[0-9.]+",
      "p[0-9.]+ µs",
      "±σ",
      "µs",
      "SVG…",
      "PNG…",
      "JSON…",
      "CSV…",
      "HSM",
      "PIN",
      "SO",
    ],
  },
};

/// Backend fields that are English or a code and have no Text beside them, as "Type.field":
/// no-backend-english flags them rendered as they are (fields with a `*_text` sibling are
/// found from the types themselves). A Text's own `text` is its English: textOf() shows it.
export const BACKEND_ENGLISH = ["Finding.kind", "Text.text"];

export default tseslint.config(
  { ignores: ["dist", "dist-mock", "node_modules", "src/bindings.ts", "src/commands.ts"] },
  {
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    files: ["src/**/*.{ts,tsx}", "tests/**/*.ts"],
    languageOptions: { ecmaVersion: 2022, globals: globals.browser },
    plugins: { "react-hooks": reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
    },
  },
  // A component a reader can take in whole: none over 200 lines of code (blank lines and
  // comments aside); a longer one is split into the parts a reader would name.
  {
    files: ["src/**/*.{ts,tsx}"],
    rules: { "max-lines-per-function": ["error", { max: 200, skipBlankLines: true, skipComments: true }] },
  },
  // Every word a person reads comes from the catalogs (../locales/*.json): a literal string
  // in JSX — text, or an attribute a person sees — is an error. tests/ui/i18n.test.mjs checks
  // that this rule and no-backend-english are errors for every view, with the catalog checks.
  {
    files: TRANSLATED,
    ignores: NOT_YET_TRANSLATED,
    plugins: { i18next },
    rules: { "i18next/no-literal-string": ["error", LITERAL_STRINGS] },
  },
  // The words the backend sends: a field shown as it is where the backend sends a Text
  // beside it, or that is known to be English (eslint-rules/no-backend-english.js). Typed
  // linting: the rule asks TypeScript what type a field belongs to.
  {
    files: TRANSLATED,
    ignores: NOT_YET_TRANSLATED,
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { hsmc: { rules: { "no-backend-english": noBackendEnglish } } },
    rules: {
      "hsmc/no-backend-english": [
        "error",
        { fields: BACKEND_ENGLISH, ignoreAttributes: LITERAL_STRINGS["jsx-attributes"].exclude.filter((a) => a !== "value") },
      ],
    },
  },
  {
    files: ["tests/**/*.mjs", "*.config.{js,ts}", "eslint-rules/*.js"],
    languageOptions: { ecmaVersion: 2022, globals: { ...globals.node, ...globals.browser } },
    extends: [js.configs.recommended],
  },
);
