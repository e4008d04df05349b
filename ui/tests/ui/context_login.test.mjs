// Keys that want the PIN for each signature (CKA_ALWAYS_AUTHENTICATE): the Generate dialog's
// checkbox asks for one, and the Sign view's batch dialog will not sign with it until the
// officer enters the PIN and consents that it is used for each of the batch's signatures —
// the count shown — which goes to the backend with the request (`context_login`).
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

test("a key made to ask for the PIN at each signature signs a batch only with the officer's consent and PIN", async () => {
  const page = await openApp(browser, { objects: 5 });
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.keyboard.press("Alt+3");
  await page.getByTestId("key-table").waitFor();
  await page.getByTestId("generate-key").click();
  await page.getByTestId("spec-info").waitFor();
  await page.getByTestId("key-label").fill("qualified_signer");
  await page.getByTestId("generate-always-authenticate").check();
  await shot(page, "70-generate-always-authenticate");
  await page.getByTestId("generate-submit").click();
  await page.getByRole("status").filter({ hasText: "Generated qualified_signer." }).waitFor();
  const [gen] = await calls(page, "generate_key");
  assert.equal(gen.args.request.always_authenticate, true);
  assert.equal(gen.args.request.label, "qualified_signer");

  await page.evaluate(() => window.__mock.drop(["/srv/q/a.pdf", "/srv/q/b.pdf", "/srv/q/c.pdf"]));
  await page.getByTestId("sign-key").selectOption({ label: "qualified_signer — ML-DSA-65" });
  const notice = page.getByTestId("per-use-notice");
  await notice.waitFor();
  assert.match(await notice.innerText(), /'qualified_signer' wants the PIN for each signature/);
  assert.match(await notice.innerText(), /Use this PIN for each of the 3 signatures of this batch/);
  const submit = page.getByTestId("sign-submit");
  assert.equal(await submit.isDisabled(), true, "not before the consent");
  assert.equal(await page.getByTestId("per-use-pin").isDisabled(), true, "the PIN goes with the consent");
  await page.getByTestId("consent-per-use").check();
  assert.equal(await submit.isDisabled(), true, "not without the PIN");
  await page.getByTestId("per-use-pin").fill("12345678");
  await shot(page, "71-sign-per-use-consent");
  await submit.click();
  await page.getByTestId("sign-report").waitFor();
  const [signed] = await calls(page, "sign_files");
  assert.equal(signed.args.request.context_login, "once_per_batch");
  assert.equal(signed.args.contextPin, "12345678");
  // The dialog forgets the consent and the PIN after the batch.
  assert.equal(await page.getByTestId("consent-per-use").isChecked(), false);
  assert.equal(await page.getByTestId("per-use-pin").inputValue(), "");

  // Another key: no consent asked, no PIN sent.
  await page.getByTestId("sign-key").selectOption({ index: 0 });
  if ((await page.getByTestId("sign-key").inputValue()).includes("qualified")) {
    await page.getByTestId("sign-key").selectOption({ index: 1 });
  }
  assert.equal(await page.getByTestId("per-use-notice").count(), 0);
  assert.deepEqual(page.errors, []);
});
