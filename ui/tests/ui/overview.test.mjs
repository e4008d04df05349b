// The Overview (the first view), the charts people read, and the console in each language.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { launch, login, openApp, shot } from "./helpers.mjs";

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

const SEEDED = {
  records: 40,
  hssRemaining: 40,
  certificates: [
    { label: "tls_edge_2026", daysLeft: 5 },
    { label: "release_ca_2026", daysLeft: 21 },
    { label: "long_lived", daysLeft: 400 },
  ],
  failedOps: 3,
  brokenAt: 17,
};

async function overview(page) {
  await page.getByRole("button", { name: "Overview" }).click();
  await page.getByTestId("overview-summary").waitFor();
}

test("the overview opens first and lists what needs attention across the partitions, each leading to its view", async () => {
  const page = await openApp(browser, SEEDED);
  await page.getByTestId("overview-summary").waitFor();
  assert.equal(await page.locator("nav.sidebar [aria-current=page]").innerText(), "Overview");
  // Before a login: the card offers it, the keys and certificates say they were not looked at.
  await page.getByTestId("card-login").waitFor();
  assert.match(await page.getByTestId("overview-keys-not-checked").innerText(), /Not looked at \(log in first\): Built-in lunasim/);
  await login(page);
  await page.getByText("user logged in").first().waitFor();
  await overview(page);
  await page.getByTestId("overview-keys").getByTestId("attention-item").first().waitFor();

  const keys = page.getByTestId("overview-keys").getByTestId("attention-item");
  assert.equal(await keys.count(), 1);
  assert.equal(await keys.first().getAttribute("data-severity"), "warning");
  assert.match(await keys.first().innerText(), /fw_hss_2026_11: 40 signatures left, about 27 days at the current rate/);

  const certs = page.getByTestId("overview-certificates").getByTestId("attention-item");
  assert.equal(await certs.count(), 2, "the certificate with 400 days left is not on the list");
  assert.match(await certs.nth(0).innerText(), /tls_edge_2026 expires on .* in 5 days/);
  assert.equal(await certs.nth(0).getAttribute("data-severity"), "critical", "soonest first");
  assert.match(await certs.nth(1).innerText(), /release_ca_2026/);
  assert.match(await page.getByTestId("overview-certificates").innerText(), /3 checked/);

  const audit = page.getByTestId("overview-audit");
  assert.match(await audit.innerText(), /The audit trail is broken at record 17/);
  const failures = page.getByTestId("overview-failures").getByTestId("attention-item");
  assert.equal(await failures.count(), 3);
  assert.match(await failures.first().innerText(), /(login|sign) failed \(PIN_INCORRECT\)/);
  const summary = page.getByTestId("overview-summary");
  assert.equal(await summary.getAttribute("data-attention"), "7");
  assert.match(await summary.innerText(), /7 items need attention/);
  await shot(page, "19-overview");

  // Each item leads to the view that deals with it.
  await certs.nth(0).getByTestId("attention-open").click();
  assert.equal(await page.getByTestId("key-search").inputValue(), "tls_edge_2026", "the Keys view searches for the certificate");
  await overview(page);
  await page.getByTestId("overview-keys").getByTestId("attention-open").click();
  await page.getByTestId("hss-table").waitFor();
  await overview(page);
  await failures.first().getByTestId("attention-open").click();
  await page.getByTestId("audit-records").waitFor();
  const day = await page.getByTestId("audit-from").inputValue();
  assert.match(day, /^2026-11-\d\d$/);
  assert.equal(await page.getByLabel("To date").inputValue(), day, "the table is filtered to the failure's day");
  assert.deepEqual(page.errors, []);
});

test("empty states say what to do: no module, nothing to report", async () => {
  const page = await openApp(browser, { noModules: true });
  await page.getByTestId("overview-summary").waitFor();
  await page.getByText("No module yet").waitFor();
  await page.getByRole("button", { name: "Go to Connections" }).click();
  await page.getByTestId("module-path").waitFor();

  const fine = await openApp(browser, { records: 5 });
  await login(fine);
  await fine.getByText("user logged in").first().waitFor();
  await fine.keyboard.press("Alt+9");
  await fine.getByTestId("verify-trail").click();
  await fine.getByTestId("verdict").waitFor();
  await overview(fine);
  await fine.getByTestId("overview-summary").filter({ hasText: "Nothing needs attention" }).waitFor();
  assert.match(await fine.getByTestId("overview-keys-empty").innerText(), /No key runs out within 30 days/);
  assert.match(await fine.getByTestId("overview-failures-empty").innerText(), /No operation failed/);
});

test("a locked PIN, a PIN to be changed and an HSM at its ceiling are on the partition's card", async () => {
  const page = await openApp(browser, { pinLocked: true, pinToBeChanged: true, busyPercent: 97 });
  await page.getByTestId("partition-card").waitFor();
  // The busy share needs two samples: refresh once more.
  await page.getByTestId("overview-refresh").click();
  const card = page.getByTestId("partition-card");
  await card.getByText(/The HSM is 97 % busy/).waitFor();
  const text = await card.innerText();
  assert.match(text, /user PIN locked/);
  assert.match(text, /user PIN must be changed/);
  assert.match(text, /The user PIN is locked: the security officer must unlock or reset it/);
  assert.equal(await card.locator("[data-kind=user_pin][data-severity=critical]").count(), 1);
});
