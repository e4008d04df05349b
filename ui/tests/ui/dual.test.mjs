// Dual signing in the Sign view: a second key chosen under "Also sign with", the request
// carrying it, formats only one key can make offered (and made by that key), the summary
// naming both keys and the .p7s naming its two signers; the chain button goes away (chain
// files are one key's chain).
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { calls, launch, login, openApp, shot } from "./helpers.mjs";

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

test("a batch signed by two keys: the second chosen under Also sign with, each output naming its signers", async () => {
  const page = await openApp(browser, { ed25519Key: true, objects: 3 });
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.evaluate(() => window.__mock.drop(["/srv/release/app-2.0.tar.gz"]));
  await page.getByTestId("sign-key").selectOption({ label: "bulk_key_00001 — ECDSA P-256" });
  assert.equal(await page.getByTestId("fmt-minisign").isDisabled(), true, "an ECDSA key makes no minisign");
  assert.equal(await page.getByTestId("chain-add").count(), 1);
  await page.getByTestId("sign-also").selectOption({ label: "release_ed25519 — Ed25519" });
  assert.equal(
    await page
      .getByTestId("also-key")
      .innerText()
      .then((s) => s.includes("release_ed25519")),
    true,
  );
  assert.equal(await page.getByTestId("chain-add").count(), 0, "chain files go with one key");
  assert.equal(await page.getByTestId("fmt-minisign").isDisabled(), false, "the Ed25519 key makes minisign");
  await page.getByTestId("fmt-minisign").check();
  await page.getByTestId("fmt-raw").check();
  await page.getByTestId("sign-submit").click();
  await page.getByTestId("sign-report").waitFor();
  const req = (await calls(page, "sign_files"))[0].args.request;
  assert.equal(req.key, `id:${"0".repeat(31)}1`);
  assert.deepEqual(req.also_keys, [`id:${(8888).toString(16).padStart(32, "0")}`]);
  assert.deepEqual(req.formats, ["cms", "minisign", "raw"]);
  assert.deepEqual(req.chain, []);
  const row = await page.getByTestId("sign-file").innerText();
  assert.match(row, /app-2\.0\.tar\.gz\.p7s \(bulk_key_00001 \+ release_ed25519\)/);
  assert.match(row, /app-2\.0\.tar\.gz\.release_ed25519\.minisig/);
  assert.match(row, /app-2\.0\.tar\.gz\.bulk_key_00001\.sig/);
  assert.match(row, /app-2\.0\.tar\.gz\.release_ed25519\.sig/);
  assert.doesNotMatch(row, /bulk_key_00001\.minisig/);
  assert.match(
    await page.getByTestId("sign-report").innerText(),
    /Signatures made with bulk_key_00001 \(ECDSA P-256\), release_ed25519 \(Ed25519\): 5,/,
  );
  await shot(page, "13-sign-dual");
  // The second key can be taken off again.
  await page.getByRole("button", { name: "Do not sign with release_ed25519" }).click();
  assert.equal(await page.getByTestId("also-key").count(), 0);
});
