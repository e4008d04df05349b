"""End-to-end: the real desktop app (WebKitGTK) on the built-in lunasim partition.

Connect, log in (after a wrong PIN), generate an ML-DSA-65 key, read its attributes,
export its public key (checked by OpenSSL and by recomputing the fingerprint), delete it,
survive a token pulled mid-session, judge the keys in the PQC readiness view and export a
CBOM through the save dialog (validated by CycloneDX's own library), and find all of it in
the audit view, which verifies.
Then `kill -9` the app in the middle of a signing batch, start it again on the same data
and finish the batch. Last, an HA group of two members (a copy of lunasim with its own
configuration beside it, its tokens made and a key pair generated through the group by
pkcs11-tool): the app shows the group, its drift check says in sync, member 2 is taken
down under the running app and the header warns, then it comes back. Screenshots of
every step are kept in --artifacts.
"""

import argparse
import base64
import hashlib
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.common.options import ArgOptions
from selenium.webdriver.remote.file_detector import UselessFileDetector
from selenium.webdriver.support.ui import Select

ML_DSA_65_OID = "2.16.840.1.101.3.4.3.18"
USER_PIN = "12345678"
SO_PIN = "87654321"


class App:
    def __init__(self, app: str, artifacts: Path, first_step: int = 0):
        opts = ArgOptions()
        opts.set_capability("browserName", "wry")
        opts.set_capability("tauri:options", {"application": app})
        self.d = webdriver.Remote(command_executor="http://127.0.0.1:4444", options=opts)
        # Paths typed into fields are text, not files to upload.
        self.d.file_detector = UselessFileDetector()
        self.artifacts = artifacts
        self.step = first_step
        self.app = app

    def quit(self):
        try:
            self.d.quit()
        except WebDriverException:
            pass

    def shot(self, name: str):
        self.step += 1
        try:
            self.d.save_screenshot(str(self.artifacts / f"{self.step:02d}-{name}.png"))
        except WebDriverException as e:
            # The window is gone (the app exited or hangs): say so; the failure that led
            # here is what the run reports.
            print(f"e2e: no screenshot {name}: {e.msg}", file=sys.stderr)

    def wait(self, cond, what: str, timeout: float = 20.0):
        end = time.time() + timeout
        last = None
        while time.time() < end:
            try:
                v = cond()
                if v:
                    return v
            except (WebDriverException, StaleElementReferenceException) as e:  # not there yet
                last = e
            time.sleep(0.1)
        self.shot("timeout")
        # One line (WebDriver's messages run over several), so the run's summary shows it whole.
        last = " ".join(str(last).split()) if last else None
        raise AssertionError(f"timed out waiting for {what} ({last}); {self.process_state()}")

    def process_state(self) -> str:
        """Whether the app's process and WebKit's web process (which draws the page, and can
        die alone: in the GL driver, say) are still there, and in which state (for a failure)."""

        def states(pattern: str) -> list[str]:
            pids = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout.split()
            out = []
            for pid in pids:
                try:
                    status = Path(f"/proc/{pid}/status").read_text()
                    state = next((line.split(":", 1)[1].strip() for line in status.splitlines() if line.startswith("State:")), "?")
                except OSError:
                    state = "gone"
                out.append(f"{pid} {state}")
            return out

        app = states(f"^{re.escape(self.app)}( |$)")
        if not app:
            return "the app's process is gone"
        web = states("/WebKitWebProcess( |$)")
        return f"the app's process: {', '.join(app)}; WebKit's web process: {', '.join(web) or 'gone'}"

    def css(self, sel: str):
        return self.d.find_elements(By.CSS_SELECTOR, sel)

    def one(self, sel: str, what: str | None = None, timeout: float = 20.0):
        return self.wait(lambda: next((e for e in self.css(sel) if e.is_displayed()), None), what or sel, timeout)

    def tid(self, testid: str, timeout: float = 20.0):
        return self.one(f"[data-testid='{testid}']", testid, timeout)

    def button(self, text: str):
        return self.wait(
            lambda: next((b for b in self.css("button") if b.is_displayed() and b.text.strip() == text), None),
            f"button {text!r}",
        )

    def alert_with(self, text: str, timeout: float = 20.0):
        return self.wait(
            lambda: next((a for a in self.css("[role=alert]") if a.is_displayed() and text in a.text), None),
            f"an alert containing {text!r}",
            timeout,
        )

    def gone(self, sel: str, what: str):
        self.wait(lambda: not any(e.is_displayed() for e in self.css(sel)), f"{what} to disappear")

    def dismiss_notices(self):
        """Closes the notices (successes and notes, not errors) with their × as an officer
        would, instead of waiting the six seconds they take to fade."""
        for toast in self.css(".toast:not(.toast-error)"):
            try:
                if toast.is_displayed():
                    toast.find_element(By.CSS_SELECTOR, "button").click()
            except WebDriverException:  # gone already, or faded while it was clicked
                pass
        self.gone(".toast:not(.toast-error)", "the notices")

    def fill(self, el, text: str):
        el.clear()
        el.send_keys(text)

    def nav(self, label: str):
        self.button(label).click()


def check(cond: bool, msg: str):
    if not cond:
        raise AssertionError(msg)


def run(app: App, data: Path):
    control = data / "builtin" / "control.jsonl"

    # Opens on the built-in partition, marked as an emulator, on the Overview: its card
    # offers a login, and keys and certificates wait for one.
    banner = app.tid("emulator-banner")
    check("not for production keys" in banner.text, banner.text)
    app.tid("overview-summary")
    active = app.one("nav.sidebar [aria-current=page]").text
    check(active == "Overview", f"the window opens on {active}")
    card = app.tid("partition-card")
    check("Built-in lunasim" in card.text, card.text)
    app.tid("card-login")
    check("log in first" in app.tid("overview-keys").text, app.tid("overview-keys").text)
    app.shot("overview")
    app.nav("Connections")
    app.shot("connections")

    # A library that is not PKCS#11: a clear message, nothing breaks.
    app.fill(app.tid("module-path"), "/usr/lib/x86_64-linux-gnu/libz.so.1")
    app.tid("module-add").click()
    a = app.alert_with("is not a PKCS#11 module")
    check("What to do" in a.text, a.text)
    app.shot("not-a-pkcs11-module")

    # A wrong PIN: refused once, the field cleared, attempts as the token reports them.
    app.tid("login-button").click()
    app.fill(app.tid("pin-input"), "0000")
    app.tid("login-submit").click()
    a = app.alert_with("The PIN is incorrect")
    check("CKR_PIN_INCORRECT" in a.text, a.text)
    check(app.tid("pin-input").get_attribute("value") == "", "PIN field cleared")
    app.shot("wrong-pin")
    app.fill(app.tid("pin-input"), USER_PIN)
    app.tid("login-submit").click()
    app.gone("[role=dialog]", "the login dialog")
    app.wait(lambda: app.tid("audit-badge").get_attribute("data-state") == "unlocked", "the audit trail to unlock")
    check("user logged in" in app.tid("current-partition").text, app.tid("current-partition").text)

    # The Overview now: logged in (the card says so), and the wrong PIN is a failed operation
    # of the last 24 hours that leads to its record in the audit trail.
    app.nav("Overview")
    app.wait(lambda: "user logged in" in app.tid("partition-card").text, "the card to show the login")
    failure = app.wait(
        lambda: next((i for i in app.css("[data-testid=overview-failures] [data-testid=attention-item]") if "login failed (PIN_INCORRECT)" in i.text), None),
        "the wrong PIN among the failed operations",
        timeout=40,
    )
    app.shot("overview-after-login")
    failure.find_element(By.CSS_SELECTOR, "[data-testid=attention-open]").click()
    app.wait(lambda: app.tid("audit-from").get_attribute("value") != "", "the audit trail filtered to the day")
    app.wait(lambda: app.tid("record-detail").text.startswith("Record"), "the failed login's record")

    # Generate an ML-DSA-65 key.
    app.nav("Keys")
    app.tid("generate-key").click()
    Select(app.tid("preset")).select_by_value("ml-dsa-65")
    app.tid("spec-info")
    suggested = app.tid("key-label").get_attribute("value")
    check(suggested.startswith("release_ml_dsa_65_"), f"suggested label {suggested}")
    label = "e2e_ml_dsa_65"
    app.fill(app.tid("key-label"), label)
    app.shot("generate-dialog")
    app.tid("generate-submit").click()
    app.gone("[role=dialog]", "the generate dialog")
    rows = app.wait(lambda: len(app.css(f"[data-testid=key-row][data-label='{label}']")) == 2 and app.css(f"[data-testid=key-row][data-label='{label}']"), "the key pair in the table")
    # The private key's row: its detail pane shows the parameter set and non-extractability.
    private = next(r for r in rows if "private key" in r.text)
    private.click()
    details = app.tid("key-details")
    app.wait(lambda: "CKA_PARAMETER_SET" in app.tid("key-details").text, "the attributes")
    text = app.tid("key-details").text
    check("ML-DSA-65" in text and "CKA_EXTRACTABLE" in text, text)
    fingerprint = app.tid("fingerprint").text.strip()
    app.tid("export-pem").click()
    pem = app.wait(lambda: app.tid("pem-text").get_attribute("value"), "the PEM")
    check("BEGIN PUBLIC KEY" in pem, pem)
    app.shot("key-details")
    del details

    # The exported key, checked outside the app.
    with tempfile.NamedTemporaryFile("w", suffix=".pem", delete=False) as f:
        f.write(pem)
    asn1 = subprocess.run(["openssl", "asn1parse", "-in", f.name], capture_output=True, text=True).stdout
    check(ML_DSA_65_OID in asn1, asn1)
    der = base64.b64decode("".join(l for l in pem.splitlines() if not l.startswith("-----")))
    check(fingerprint == "SHA256:" + hashlib.sha256(der).hexdigest(), f"{fingerprint} is the SHA-256 of the SPKI")
    check(len(der) == 1974, f"ML-DSA-65 SPKI is 22 + 1952 bytes, got {len(der)}")

    # Delete both halves: the label must be typed.
    for r in app.css(f"[data-testid=key-row][data-label='{label}']"):
        r.find_element(By.CSS_SELECTOR, "input[type=checkbox]").click()
    app.tid("delete-keys").click()
    submit = app.tid("delete-submit")
    check(not submit.is_enabled(), "delete is disabled until the label is typed")
    app.fill(app.tid("delete-confirm"), label)
    app.wait(lambda: app.tid("delete-submit").is_enabled(), "delete to be enabled")
    app.tid("delete-submit").click()
    app.gone("[role=dialog]", "the delete dialog")
    app.gone(f"[data-testid=key-row][data-label='{label}']", "the deleted keys")
    app.shot("after-delete")

    # The token is pulled mid-session (lunasim fault injection): a clear message, the window
    # keeps working, and the console reconnects when the token is back.
    with control.open("a") as f:
        f.write(json.dumps({"op": "fail", "function": "*", "rv": "CKR_TOKEN_NOT_PRESENT", "count": None}) + "\n")
    time.sleep(0.1)
    app.button("Refresh").click()
    a = app.alert_with("HSM")
    check("connection failed" in a.text or "failing repeatedly" in a.text, a.text)
    app.shot("token-removed")
    app.nav("Partition")
    app.nav("Keys")
    with control.open("a") as f:
        f.write(json.dumps({"op": "clear"}) + "\n")
    time.sleep(0.1)

    def recovered():
        app.button("Refresh").click()
        time.sleep(0.5)
        return not any(a.is_displayed() and "HSM" in a.text for a in app.css("[role=alert]")) and app.css("[data-testid=key-table]")

    app.wait(recovered, "the console to reconnect", timeout=60)

    # Release signing by a real X11 drag and drop from a GTK drag source.
    sign_by_drag_and_drop(app, data)
    files_changed_while_signed(app, data, control)
    pqc_readiness(app)

    # The health dashboard with live charts (two samples 5 s apart give the busy share).
    app.nav("Statistics")
    app.tid("chart-load")
    app.wait(lambda: "%" in app.tid("busy").text, "the busy share from two samples", timeout=30)
    # Charts are drawn in the page at its text size: no chart text smaller than the body's.
    sizes = app.wait(
        lambda: (lambda v: v if len(v) > 6 else None)(
            app.d.execute_script(
                "const b = parseFloat(getComputedStyle(document.body).fontSize);"
                "return [b, ...[...document.querySelectorAll('[data-testid=chart-load] svg text')].map((t) => parseFloat(getComputedStyle(t).fontSize))];"
            )
        ),
        "the load chart's text",
    )
    check(min(sizes[1:]) >= sizes[0], f"chart text sizes {sizes[1:]} against the body's {sizes[0]}")
    app.shot("statistics")

    # A latency probe sweep with its live chart, report and charts.
    app.nav("Probes")
    Select(app.tid("probe-op")).select_by_value("ml-dsa-65-sign")
    app.fill(app.tid("probe-seconds"), "1")
    app.fill(app.tid("probe-workers"), "1,2")
    app.tid("probe-run").click()
    report = app.tid("probe-report", timeout=60)
    check("ml-dsa-65-sign" in report.text, report.text)
    app.tid("probe-verdict")
    sweep = app.wait(lambda: next((e for e in app.css("[data-testid=probe-chart-sweep] svg")), None), "the sweep chart")
    check("workers" in sweep.text and "throughput (ops/s)" in sweep.text, sweep.text)
    app.shot("probe")

    # Everything is in the audit trail, which verifies.
    app.nav("Audit trail")
    want = {"login", "key.generate.request", "key.generate", "key.export_public", "key.destroy.request", "key.destroy", "module.add", "sign.batch", "sign", "probe.run"}
    actions = app.wait(lambda: (lambda s: s if want <= s else None)({r.get_attribute("data-action") for r in app.css("[data-testid=audit-row]")}), f"audit rows for {sorted(want)}")
    check(any("failure" in r.text for r in app.css("[data-testid=audit-row][data-action='login']")), "the wrong PIN is recorded")
    app.tid("verify-trail").click()
    verdict = app.tid("verdict", timeout=60)
    check(verdict.get_attribute("data-verdict") == "intact", verdict.text)
    app.wait(lambda: app.tid("verification-badge").get_attribute("data-state") == "intact", "the header badge to say intact")
    app.shot("audit")

    # From a signing record to the signed file: the Verify view checks it again.
    app.fill(app.tid("audit-search"), "app-2.0.tar.gz")
    row = app.wait(lambda: next(iter(app.css("[data-testid=audit-row][data-action='sign']")), None), "the signing record of app-2.0.tar.gz")
    row.click()
    app.tid("record-signed-file").click()
    app.wait(lambda: app.tid("verify-file").get_attribute("value").endswith("app-2.0.tar.gz"), "the Verify view with the signed file")
    app.tid("verify-submit").click()
    app.wait(lambda: app.tid("verify-report").get_attribute("data-valid") == "true", "the signed file to verify again")

    # Someone edits the SQLite file behind the console's back (another SQLite client):
    # verification names exactly that record and the table highlights it.
    db = sqlite3.connect(data / "audit.db", timeout=30)
    seq = db.execute("SELECT seq FROM audit_log WHERE action = 'sign' AND resource_id = 'app-2.0.sbom.json'").fetchone()[0]
    db.execute("UPDATE audit_log SET metadata = replace(metadata, '\"size\":75000', '\"size\":76000') WHERE seq = ?", (seq,))
    check(db.total_changes == 1, "the tamper edit changed one row")
    db.commit()
    db.close()
    app.nav("Audit trail")  # a fresh view: no search filter
    app.tid("verify-trail").click()
    verdict = app.wait(lambda: (lambda v: v if v and v.get_attribute("data-verdict") == "broken" else None)(next(iter(app.css("[data-testid=verdict]")), None)), "a broken verdict", timeout=60)
    check(f"Broken at record {seq}" in verdict.text, verdict.text)
    check("modified" in verdict.text, verdict.text)
    bad = app.wait(lambda: next(iter(app.css("[data-testid=audit-row][data-bad=true]")), None), "the damaged record highlighted")
    check(bad.get_attribute("data-seq") == str(seq), f"highlighted {bad.get_attribute('data-seq')}, tampered {seq}")
    app.wait(lambda: app.tid("verification-badge").get_attribute("data-state") == "broken", "the header badge to say broken")
    app.shot("audit-tampered")
    # Undo the edit byte for byte: the trail is whole again for what follows.
    db = sqlite3.connect(data / "audit.db", timeout=30)
    db.execute("UPDATE audit_log SET metadata = replace(metadata, '\"size\":76000', '\"size\":75000') WHERE seq = ?", (seq,))
    check(db.total_changes == 1, "the edit was undone")
    db.commit()
    db.close()

    hostile_ipc(app)
    print(f"e2e: ok ({len(actions)} kinds of audited actions; tampered record {seq} named)")


KEYS_SEEN_BY_BACKEND = r"""
const done = arguments[arguments.length - 1];
const inv = window.__TAURI_INTERNALS__.invoke;
(async () => {
  const conns = await inv("connections");
  const pid = conns.flatMap((m) => m.slots).find((s) => s.partition_id).partition_id;
  const out = { pid };
  try { out.keys = (await inv("list_keys", { partitionId: pid })).map((k) => [k.label, k.class, k.id_hex, k.handle, JSON.stringify(k.capabilities)]); } catch (e) { out.keysErr = JSON.stringify(e); }
  try { out.signing = (await inv("signing_keys", { partitionId: pid })).map((k) => [k.label, k.id_hex]); } catch (e) { out.signingErr = JSON.stringify(e); }
  try { out.partition = await inv("partition", { partitionId: pid }); } catch (e) { out.partErr = JSON.stringify(e); }
  done(out);
})().catch((e) => done({ harness: String(e) }));
"""

HOSTILE_IPC = r"""
const done = arguments[arguments.length - 1];
const inv = window.__TAURI_INTERNALS__.invoke;
(async () => {
  const conns = await inv("connections");
  const pid = conns.flatMap((m) => m.slots).find((s) => s.partition_id).partition_id;
  const keysBefore = (await inv("list_keys", { partitionId: pid })).length;
  const chan = `__CHANNEL__:${window.__TAURI_INTERNALS__.transformCallback(() => {})}`;
  const cases = [
    ["a partition id that looks like a path", "list_keys", { partitionId: "../../../etc/passwd" }],
    ["an unknown key handle", "key_details", { partitionId: pid, handle: 9007199254740991 }],
    ["a negative handle", "key_details", { partitionId: pid, handle: -1 }],
    ["a handle of the wrong type", "export_public_key", { partitionId: pid, handle: "1; DROP TABLE", format: "pem" }],
    ["handles of the wrong type", "destroy_keys", { partitionId: pid, handles: "all", confirmation: "x" }],
    ["deleting without the confirmation phrase", "destroy_keys", { partitionId: pid, handles: [1, 2, 3], confirmation: "" }],
    ["a 1 MiB PIN", "login", { partitionId: pid, user: "user", pin: "9".repeat(1 << 20) }],
    ["an unknown user kind", "login", { partitionId: pid, user: "root", pin: "x" }],
    ["an export kind that is a path", "save_export", { fileName: "../../../../tmp/x", kind: "../../etc", text: "x" }],
    ["a module that is not a library", "add_module", { path: "/etc/passwd" }],
    ["a module path that does not exist", "add_module", { path: "../../../nonexistent/libx.so" }],
    ["an empty job id", "cancel_job", { jobId: "" }],
    ["a 10 MB label", "generate_key", { partitionId: pid, request: { spec: { kind: "ec", curve: "P256" }, label: "x".repeat(10_000_000), token: true }, onEvent: chan }],
    ["the filesystem plugin", "plugin:fs|read_file", { path: "/etc/passwd" }],
    ["the shell plugin", "plugin:shell|execute", { program: "sh", args: ["-c", "id"] }],
    ["the HTTP plugin", "plugin:http|fetch", { url: "http://127.0.0.1/" }],
  ];
  const out = [];
  for (const [name, cmd, args] of cases) {
    try {
      const r = await inv(cmd, args);
      out.push({ name, rejected: false, result: JSON.stringify(r).slice(0, 300) });
    } catch (e) {
      out.push({ name, rejected: true, error: typeof e === "string" ? e : JSON.stringify(e) });
    }
  }
  const limits = [];
  for (const limit of [-5, 0, 1e12]) limits.push((await inv("audit_records", { query: { limit } })).length);
  const keysAfter = (await inv("list_keys", { partitionId: pid })).length;
  done({ out, limits, keysBefore, keysAfter });
})().catch((e) => done({ harness: String(e) }));
"""


def hostile_ipc(app: App):
    """The page calls commands with hostile arguments; Rust rejects every one with a
    message (an ApiError where the command ran, Tauri's refusal where the arguments did not
    deserialize or the command is not in the window's capabilities), nothing changes, and the
    window keeps working."""
    app.d.set_script_timeout(60)
    r = app.d.execute_async_script(HOSTILE_IPC)
    check("harness" not in r, f"hostile IPC harness: {r}")
    for c in r["out"]:
        check(c["rejected"], f"{c['name']}: accepted ({c.get('result')})")
        check(len(c["error"]) < 2000, f"{c['name']}: an error of {len(c['error'])} chars echoes the input")
        if c["error"].startswith("{"):
            e = json.loads(c["error"])
            check(e.get("code") and e.get("message"), f"{c['name']}: not an ApiError: {e}")
            check(e["code"] != "PIN_INCORRECT", f"{c['name']}: counted as a PIN attempt")
    check(all(0 <= n <= 1000 for n in r["limits"]), f"audit_records limits clamped: {r['limits']}")
    check(r["keysBefore"] == r["keysAfter"], f"keys changed: {r['keysBefore']} -> {r['keysAfter']}")
    with open(Path(app.artifacts) / "hostile-ipc.json", "w") as f:
        json.dump(r, f, indent=2)
    app.nav("Keys")
    app.tid("key-table")
    print(f"e2e: {len(r['out'])} hostile IPC calls rejected")


def drag_files(files, drop_at=(600, 420)):
    """Drag `files` from a GTK drag source onto the app window with xdotool, as a user would."""
    src = subprocess.Popen(["/usr/bin/python3", str(Path(__file__).with_name("drag_source.py")), "1500", "120", *map(str, files)], stdout=subprocess.PIPE, text=True)
    try:
        assert src.stdout.readline().strip() == "ready"
        time.sleep(0.8)
        x, y = 1500 + 120, 120 + 80
        subprocess.run(["xdotool", "mousemove", str(x), str(y)], check=True)
        time.sleep(0.2)
        subprocess.run(["xdotool", "mousedown", "1"], check=True)
        # Past GTK's drag threshold, then across to the app in small steps.
        steps = 25
        for i in range(1, steps + 1):
            nx = x + (drop_at[0] - x) * i // steps
            ny = y + (drop_at[1] - y) * i // steps
            subprocess.run(["xdotool", "mousemove", str(nx), str(ny)], check=True)
            time.sleep(0.04)
        time.sleep(0.4)
        subprocess.run(["xdotool", "mouseup", "1"], check=True)
        time.sleep(0.8)
    finally:
        src.terminate()


def sign_by_drag_and_drop(app: App, data: Path):
    # A fresh ML-DSA-65 release key.
    app.nav("Keys")
    app.tid("generate-key").click()
    Select(app.tid("preset")).select_by_value("ml-dsa-65")
    app.tid("spec-info")
    app.fill(app.tid("key-label"), "e2e_release_ml_dsa_65")
    app.tid("generate-submit").click()
    app.gone("[role=dialog]", "the generate dialog")
    # Three artifacts, dropped on the window.
    rel = data / "release"
    rel.mkdir(parents=True, exist_ok=True)
    files = [rel / "app-2.0.tar.gz", rel / "app-2.0.sbom.json", rel / "firmware.bin"]
    for i, f in enumerate(files):
        f.write_bytes(bytes((j * 7 + i) % 251 for j in range(5000 + 70000 * i)))
    drag_files(files)
    app.wait(lambda: len(app.css("[data-testid=sign-file]")) == 3, "the three dropped files in the Sign view")
    # The key list loads asynchronously: wait for the new key to be offered.
    try:
        option = app.wait(lambda: next((o.text for o in Select(app.tid("sign-key")).options if o.text.startswith("e2e_release_ml_dsa_65")), None), "the new key among the signing keys")
    except AssertionError:
        app.d.set_script_timeout(60)
        dbg = app.d.execute_async_script(KEYS_SEEN_BY_BACKEND)
        print("e2e: what the backend lists:", json.dumps(dbg, indent=1)[:20000], file=sys.stderr)
        raise
    Select(app.tid("sign-key")).select_by_visible_text(option)
    raw = app.tid("fmt-raw")
    if not raw.is_selected():
        raw.click()
    app.shot("sign-dropped")
    app.tid("sign-submit").click()
    report = app.tid("sign-report", timeout=60)
    check("verified in software" in report.text, report.text)
    app.shot("sign-report")
    pub = rel / "e2e_release_ml_dsa_65.pub.pem"
    verifier = str(Path(__file__).resolve().parents[1] / "interop" / "verify_release.py")
    for f in files:
        for kind, args in (("cms", [str(f), f"{f}.p7s"]), ("raw", [str(f), f"{f}.sig", str(pub)])):
            r = subprocess.run([sys.executable, verifier, kind, *args], capture_output=True, text=True)
            check(r.returncode == 0, f"outside verifier on {f.name} ({kind}): {r.stderr}")
    # And the app's own Verify view agrees.
    app.nav("Verify")
    app.fill(app.tid("verify-file"), str(files[0]))
    app.fill(app.tid("verify-sig"), f"{files[0]}.p7s")
    app.tid("verify-submit").click()
    app.wait(lambda: app.tid("verify-report").get_attribute("data-valid") == "true", "a valid verdict")
    app.shot("verify")


def save_in_gtk_dialog(title: str, path: Path):
    """Answer the app's native (GTK) save dialog as an officer would: the path typed into its
    name field, then Enter."""
    found = subprocess.run(["xdotool", "search", "--sync", "--name", title], capture_output=True, text=True, timeout=30)
    windows = found.stdout.split()
    check(bool(windows), f"the {title!r} dialog: {found.stderr}")
    subprocess.run(["xdotool", "windowfocus", windows[-1]], check=True)
    time.sleep(0.8)
    subprocess.run(["xdotool", "key", "--clearmodifiers", "ctrl+a"], check=True)
    subprocess.run(["xdotool", "type", "--delay", "40", str(path)], check=True)
    time.sleep(0.5)
    subprocess.run(["xdotool", "key", "Return"], check=True)


def cyclonedx_errors(doc: str):
    """What CycloneDX's own validator (cyclonedx-python-lib, strict, 1.6) finds wrong; None if valid."""
    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator

    return JsonStrictValidator(SchemaVersion.V1_6).validate_str(doc)


def components(c):
    """Every component of a CycloneDX document, nested ones too."""
    for x in c.get("components", []):
        yield x
        yield from components(x)


def pqc_readiness(app: App):
    """The PQC readiness view on the keys of the run so far and a P-256 key made for it:
    judged as NIST IR 8547 and SP 800-57 say, with the release key's signatures from the
    trail; its successor dialog filled in; a CBOM exported through the real save dialog and
    validated by CycloneDX's own library."""
    app.nav("Keys")
    app.tid("generate-key").click()
    Select(app.tid("preset")).select_by_value("ec-p256")
    # The suggested label comes with the spec's description: typed over after it.
    app.tid("spec-info")
    app.fill(app.tid("key-label"), "e2e_test_p256")
    app.wait(lambda: app.tid("key-label").get_attribute("value") == "e2e_test_p256", "the label as typed")
    app.tid("generate-submit").click()
    app.gone("[role=dialog]", "the generate dialog")
    app.nav("PQC readiness")

    def cells(label: str):
        sel = f"[data-testid=pqc-row][data-label='{label}'][data-class=PRIVATE_KEY]"
        try:
            row = app.wait(lambda: next(iter(app.css(sel)), None), f"the {label} row")
        except AssertionError:
            print("e2e: readiness rows:", [r.get_attribute("data-label") for r in app.css("[data-testid=pqc-row]")], file=sys.stderr)
            raise
        return row, [td.text for td in row.find_elements(By.CSS_SELECTOR, "td")]

    check("Judged under NIST IR 8547" in app.tid("pqc-policy-name").text, app.tid("pqc-policy-name").text)
    # P-256: 128 bits of classical security (SP 800-57), so NIST IR 8547 disallows it after
    # 2035 with no deprecation in 2030; the trail never saw it sign.
    p256, c = cells("e2e_test_p256")
    check(c[2] == "Quantum-vulnerable" and "128-bit" in c[1], str(c))
    check("disallowed after 2035-12-31" in c[4] and "deprecated after" not in c[4], c[4])
    check("Never used" in c[6], c[6])
    check("ML-DSA-65" in c[7], c[7])
    # The release key: ML-DSA-65 is FIPS 204 category 3; it signed the dropped files.
    _, c = cells("e2e_release_ml_dsa_65")
    check(c[2] == "Post-quantum" and c[3] == "category 3" and c[4] == "no date", str(c))
    used = re.search(r"(\d+) signatures in 30 days", c[6])
    check(used is not None and int(used.group(1)) >= 3, c[6])
    app.shot("pqc-readiness")

    # Generate successor…: the dialog with ML-DSA-65 and a label from the old one. The
    # notices of the last steps sit over the table's right-hand column.
    app.dismiss_notices()
    button = p256.find_element(By.CSS_SELECTOR, "[data-testid=pqc-generate-successor]")
    app.d.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
    button.click()
    check(Select(app.tid("preset")).first_selected_option.get_attribute("value") == "ml-dsa-65", "the successor's preset")
    check(app.tid("key-label").get_attribute("value") == "e2e_test_ml_dsa_65", app.tid("key-label").get_attribute("value"))
    app.shot("pqc-successor")
    app.d.switch_to.active_element.send_keys(Keys.ESCAPE)
    app.gone("[role=dialog]", "the successor dialog")

    # The CBOM, saved where the officer types it in the save dialog.
    out = Path(tempfile.mkdtemp(prefix="e2e-cbom-")) / "token.cdx.json"
    app.tid("pqc-export-cbom").click()
    save_in_gtk_dialog("Export a CBOM", out)
    app.wait(lambda: any(f"CBOM saved to {out}" in e.text for e in app.css("[role=status], .toast")), "the CBOM saved notice", timeout=30)
    doc = out.read_text()
    errors = cyclonedx_errors(doc)
    check(errors is None, f"CycloneDX 1.6 validation: {errors}")
    # The validator is not blind: an asset type the schema does not know is refused.
    check(cyclonedx_errors(doc.replace('"assetType": "algorithm"', '"assetType": "no-such-asset"', 1)) is not None, "a broken CBOM refused")
    bom = json.loads(doc)
    check(bom["bomFormat"] == "CycloneDX" and bom["specVersion"] == "1.6", str(bom.get("specVersion")))
    named = {x["name"]: x for x in components(bom)}
    for label in ("e2e_test_p256", "e2e_release_ml_dsa_65"):
        check(label in named, f"{label} in the CBOM: {sorted(named)}")
    props = {p["name"]: p["value"] for p in named["e2e_test_p256"]["properties"]}
    check(props.get("hsm-console:disallowed-after") == "2035-12-31", str(props))
    check(any(x.get("cryptoProperties", {}).get("assetType") == "algorithm" and x["name"] == "ML-DSA-65" for x in components(bom)), "ML-DSA-65 as an algorithm component")
    print(f"e2e: CBOM of {len(named)} components valid CycloneDX 1.6")


def files_changed_while_signed(app: App, data: Path, control: Path):
    """Two dropped files change after the batch hashed them (lunasim holds each signature
    back 2 s): one is truncated, the other replaced by rename. Both are refused by name
    with what changed, and nothing is left beside them."""
    rel = data / "changing"
    rel.mkdir(parents=True, exist_ok=True)
    files = [rel / "build-1.tar", rel / "build-2.tar"]
    for i, f in enumerate(files):
        f.write_bytes(bytes((j * 5 + i) % 249 for j in range(9000)))
    with control.open("a") as c:
        for fn in ("C_Sign", "C_SignFinal"):
            c.write(json.dumps({"op": "slow", "function": fn, "ms": 2000}) + "\n")
    db = sqlite3.connect(data / "audit.db", timeout=30)
    before = db.execute("SELECT count(*) FROM audit_log WHERE action = 'sign.batch'").fetchone()[0]
    start_signing(app, files, continue_on_error=True)
    # The batch's request is recorded once every file is hashed, before the first signature.
    end = time.time() + 60
    while db.execute("SELECT count(*) FROM audit_log WHERE action = 'sign.batch'").fetchone()[0] == before:
        check(time.time() < end, "no sign.batch 60 s after Sign")
        time.sleep(0.02)
    db.close()
    with files[0].open("r+b") as f:
        f.truncate(4000)
    (rel / "build-2.tar.new").write_bytes(b"another build")
    os.rename(rel / "build-2.tar.new", files[1])
    app.tid("sign-report", timeout=120)
    with control.open("a") as c:
        c.write(json.dumps({"op": "clear"}) + "\n")
    rows = sign_rows(app)
    app.shot("sign-files-changed")
    for f, what in ((files[0], "size went from 9000 to 4000 bytes"), (files[1], "another file was put in its place")):
        state, text = rows[f.name]
        check(state == "failed" and f.name in text and what in text, f"{f.name}: {state} {text}")
        left = [p.name for p in rel.iterdir() if p.name.startswith(f.name + ".")]
        check(not left, f"outputs left beside a changed file: {left}")


def login(app: App):
    app.nav("Connections")
    app.tid("login-button").click()
    app.fill(app.tid("pin-input"), USER_PIN)
    app.tid("login-submit").click()
    app.gone("[role=dialog]", "the login dialog")
    app.wait(lambda: app.tid("audit-badge").get_attribute("data-state") == "unlocked", "the audit trail to unlock")


def sign_rows(app: App):
    return {r.get_attribute("data-name"): (r.get_attribute("data-state"), r.text) for r in app.css("[data-testid=sign-file]")}


def start_signing(app: App, files, continue_on_error: bool = False):
    app.nav("Sign")
    app.button("Clear").click()
    drag_files(files)
    app.wait(lambda: len(app.css("[data-testid=sign-file]")) == len(files), f"the {len(files)} dropped files in the Sign view")
    app.wait(lambda: all(st == "ready" for st, _ in sign_rows(app).values()), "every file checked")
    option = app.wait(lambda: next((o.text for o in Select(app.tid("sign-key")).options if o.text.startswith("e2e_release_ml_dsa_65")), None), "the release key")
    Select(app.tid("sign-key")).select_by_visible_text(option)
    for box, on in (("fmt-cms", True), ("fmt-raw", True), ("continue-on-error", continue_on_error)):
        if app.tid(box).is_selected() != on:
            app.tid(box).click()
    app.tid("sign-submit").click()


def kill_9_while_signing(app_path: str, artifacts: Path, data: Path):
    """`kill -9` of the desktop app in the middle of a drag-and-drop batch: every signature
    under its final name is complete and passes the outside verifier, nothing is half
    written, the write-ahead record covers every signed file; the app starts again on the
    same data, its trail verifies, and the batch finishes with the signed files refused by
    name (nothing overwritten)."""
    control = data / "builtin" / "control.jsonl"
    batch = data / "kill9"
    batch.mkdir(parents=True, exist_ok=True)
    files = [batch / f"artifact-{i:02d}.bin" for i in range(60)]
    for i, f in enumerate(files):
        f.write_bytes(bytes((j * 11 + i) % 253 for j in range(3000 + 500 * i)))
    app = App(app_path, artifacts, first_step=40)
    try:
        login(app)
        # Slow the HSM's signing a little so the batch takes seconds, not milliseconds.
        with control.open("a") as c:
            for fn in ("C_Sign", "C_SignFinal"):
                c.write(json.dumps({"op": "slow", "function": fn, "ms": 40}) + "\n")
        start_signing(app, files)
        end = time.time() + 60
        while not (batch / "artifact-00.bin.p7s").exists():
            check(time.time() < end, "no signature 60 s after Sign")
            time.sleep(0.002)
        time.sleep(0.4)
        pids = subprocess.run(["pgrep", "-f", f"^{re.escape(app_path)}( |$)"], capture_output=True, text=True).stdout.split()
        check(len(pids) == 1, f"one app process to kill, found {pids}")
        os.kill(int(pids[0]), signal.SIGKILL)
    finally:
        app.quit()

    names = sorted(p.name for p in batch.iterdir() if p not in files)
    pub = data / "release" / "e2e_release_ml_dsa_65.pub.pem"
    verifier = str(Path(__file__).resolve().parents[1] / "interop" / "verify_release.py")
    signed = set()
    for name in names:
        if name.endswith(".partial"):
            check(name.startswith("."), f"a temporary file is hidden: {name}")
            continue
        if name.endswith(".pub.pem"):
            check((batch / name).read_text() == pub.read_text(), f"{name} is the release key")
            continue
        if name.endswith(".p7s"):
            kind, art, args = "cms", name[: -len(".p7s")], []
        elif name.endswith(".sig"):
            kind, art, args = "raw", name[: -len(".sig")], [str(pub)]
        else:
            raise AssertionError(f"unexpected file after kill -9: {name}")
        r = subprocess.run([sys.executable, verifier, kind, str(batch / art), str(batch / name), *args], capture_output=True, text=True)
        check(r.returncode == 0, f"{name} is not a complete, valid signature: {r.stderr}")
        signed.add(art)
    check(0 < len(signed) < len(files), f"killed mid-batch: {len(signed)} of {len(files)} signed")
    db = sqlite3.connect(data / "audit.db", timeout=30)
    request = db.execute("SELECT metadata FROM audit_log WHERE action = 'sign.batch' ORDER BY seq DESC LIMIT 1").fetchone()[0]
    db.close()
    listed = {f["name"] for f in json.loads(request)["files"]}
    check(signed <= listed, f"signed but not in the write-ahead record: {sorted(signed - listed)}")
    print(f"e2e: kill -9 after {len(signed)} of {len(files)} files; {len(names)} outputs, all complete and valid")

    # The app starts again on the same data; its trail verifies; the batch finishes.
    app = App(app_path, artifacts, first_step=50)
    try:
        app.tid("emulator-banner")
        login(app)
        app.nav("Audit trail")
        app.tid("verify-trail").click()
        verdict = app.tid("verdict", timeout=60)
        check(verdict.get_attribute("data-verdict") == "intact", verdict.text)
        app.shot("after-kill-9-trail-intact")
        start_signing(app, files, continue_on_error=True)
        report = app.tid("sign-report", timeout=120)
        rows = sign_rows(app)
        app.shot("after-kill-9-batch-finished")
        made = 0
        for f in files:
            state, text = rows[f.name]
            if f.name in signed:
                check(state == "failed" and "already exists" in text, f"{f.name} (signed before the kill): {state} {text}")
            else:
                check(state == "signed", f"{f.name}: {state} {text}")
                made += 2
                for suffix in ("p7s", "sig"):
                    check((batch / f"{f.name}.{suffix}").exists(), f"{f.name}.{suffix} after the second run")
        check(f"{made} signatures with e2e_release_ml_dsa_65" in report.text, report.text[:200])
        left = [p.name for p in batch.iterdir() if p.name.endswith(".partial")]
        check(not left, f"temporary files left: {left}")
    finally:
        app.quit()
    print(f"e2e: the app restarted on the same data, the trail verified, the batch finished ({made} signatures)")


HA_SERIAL = "1280000700"


def pkcs11_tool(lib: Path, *args: str):
    r = subprocess.run(["pkcs11-tool", "--module", str(lib), *args], capture_output=True, text=True)
    check(r.returncode == 0, f"pkcs11-tool {' '.join(args)}: {r.stderr}{r.stdout}")
    return r.stdout


def make_ha_group(target: Path, ha: Path) -> Path:
    """A copy of liblunasim.so with `<lib>.toml` beside it: a group of two Kryoptic slots."""
    ha.mkdir(parents=True, exist_ok=True)
    lib = ha / "liblunasim-ha.so"
    shutil.copy(target / "liblunasim.so", lib)
    kryoptic = (target.parent / "pkcs11" / "libkryoptic_pkcs11.so").resolve()
    slots = "".join(f'[[slots]]\nslot = {n}\ndbtype = "sqlite"\ndbargs = "{ha / f"member-{n}.sql"}"\n' for n in (1, 2))
    (ha / "kryoptic.conf").write_text(slots)
    members = "".join(f'[[ha_group.member]]\nserial = "12800007{n:02d}"\nslot = {n}\n' for n in (1, 2))
    (ha / "liblunasim-ha.so.toml").write_text(
        f'inner_module = "{kryoptic}"\nstore_dir = "{ha / "store"}"\ncontrol_file = "{ha / "control.jsonl"}"\n\n'
        f'[[ha_group]]\nlabel = "e2e-ha"\nserial = "{HA_SERIAL}"\n{members}\n'
        f'[inner_env]\nKRYOPTIC_CONF = "{ha / "kryoptic.conf"}"\n'
    )
    (ha / "control.jsonl").write_text("")
    for n in (1, 2):
        pkcs11_tool(lib, "--slot", str(n), "--init-token", "--label", f"member-{n}", "--so-pin", "87654321")
        pkcs11_tool(lib, "--slot", str(n), "--init-pin", "--login", "--login-type", "so", "--so-pin", "87654321", "--new-pin", USER_PIN)
    # An outside client makes a key pair through the group: both members get it.
    pkcs11_tool(lib, "--slot", "100", "--login", "--pin", USER_PIN, "--keypairgen", "--key-type", "EC:prime256v1", "--label", "e2e-ha-fw", "--id", "0e2e")
    for n in (1, 2):
        listing = pkcs11_tool(lib, "--slot", str(n), "--login", "--pin", USER_PIN, "--list-objects", "--type", "privkey")
        check("e2e-ha-fw" in listing, f"member {n} holds the group's key: {listing}")
    return lib


def ha_group_with_a_member_down(app_path: str, artifacts: Path, data: Path):
    lib = make_ha_group(Path(app_path).parent, data.parent / "ha")
    # This run: only the HA group's module (the built-in partition off).
    settings_file = data / "settings.json"
    # The earlier steps may not have saved settings yet (every field has a default).
    settings = json.loads(settings_file.read_text()) if settings_file.exists() else {}
    settings["builtin_enabled"] = False
    settings["modules"] = [str(lib)]
    settings_file.write_text(json.dumps(settings))
    control = data.parent / "ha" / "control.jsonl"
    app = App(app_path, artifacts, first_step=70)
    try:
        app.nav("Connections")
        group = app.tid(f"ha-group-{HA_SERIAL}", timeout=60)
        check("HA group e2e-ha" in group.text and "1280000702" in group.text, group.text)
        app.shot("ha-connections")
        row = app.tid("slot-100")
        row.find_element(By.CSS_SELECTOR, "[data-testid=login-button]").click()
        app.fill(app.tid("pin-input"), USER_PIN)
        app.tid("login-submit").click()
        app.gone("[role=dialog]", "the login dialog")
        app.nav("Partition")
        members = lambda: app.tid("ha-group").find_elements(By.CSS_SELECTOR, "[data-testid=ha-member]")
        app.wait(lambda: len(members()) == 2 and all(m.get_attribute("data-alive") == "true" for m in members()), "two alive members")
        app.tid("drift-check").click()
        app.wait(lambda: app.tid("drift-verdict").get_attribute("data-verdict") == "in_sync", "the drift check to say in sync", timeout=60)
        app.shot("ha-in-sync")

        # Member 2 goes down under the running app: the header warns, the table says so.
        with control.open("a") as f:
            f.write(json.dumps({"op": "member_down", "member": 2}) + "\n")
        warning = app.wait(
            lambda: next((w for w in app.css("[data-testid=ha-warning]") if w.is_displayed() and "member 2 down" in w.text), None),
            "the header's HA warning",
            timeout=60,
        )
        check("e2e-ha" in warning.text, warning.text)
        app.wait(lambda: members()[1].get_attribute("data-alive") == "false", "member 2 shown down", timeout=30)
        check("CKR_UNABLE_TO_CONNECT" in members()[1].text, members()[1].text)
        app.shot("ha-member-down")

        # Back again: the warning goes.
        with control.open("a") as f:
            f.write(json.dumps({"op": "member_up", "member": 2}) + "\n")
        app.wait(lambda: not any(w.is_displayed() for w in app.css("[data-testid=ha-warning]")), "the HA warning to go", timeout=60)
        app.shot("ha-member-back")
    finally:
        app.quit()
    print("e2e: an HA group shown, member 2 taken down under the running app and back")


def administer(app_path: str, artifacts: Path, data: Path):
    """Partition administration in the real app on the built-in partition (lunasim, Luna's
    policy 21): the SO sets the Crypto Officer's PIN, which the partition then flags "to be
    changed"; the next login is offered the change at once and makes it (the old PIN is
    refused after); an issued certificate is imported through the file dialog's path field
    and lands next to its key; a label is edited; a URI is shown and copied."""
    settings_file = data / "settings.json"
    settings = json.loads(settings_file.read_text()) if settings_file.exists() else {}
    settings["builtin_enabled"] = True
    settings["modules"] = []
    settings_file.write_text(json.dumps(settings))
    # Luna's policy 21 ("force user PIN change after set/reset"), on by default on a real
    # partition, is set here as an officer would in the built-in partition's lunasim.toml.
    conf = data / "builtin" / "lunasim.toml"
    if not conf.exists():
        # Alone (E2E_ONLY=admin), on fresh data: the app's first start makes the partition.
        app = App(app_path, artifacts)
        try:
            end = time.time() + 120
            while not conf.exists():
                check(time.time() < end, "no built-in partition 120 s after the first start")
                time.sleep(0.2)
        finally:
            app.quit()
    marker = "# Your settings (kept when the console rewrites this file):"
    text = conf.read_text()
    check(marker in text, text)
    conf.write_text(text.replace(marker, marker + "\nforce_user_pin_change = true"))
    first, second = "officer-e2e-1", "officer-e2e-2"
    app = App(app_path, artifacts, first_step=90)
    try:
        app.nav("Connections")
        app.tid("login-button", timeout=60).click()
        app.tid("role-so").click()
        app.fill(app.tid("pin-input"), SO_PIN)
        app.tid("login-submit").click()
        app.gone("[role=dialog]", "the login dialog")
        app.nav("Partition")
        app.tid("set-user-pin").click()
        app.fill(app.tid("new-pin"), first)
        app.fill(app.tid("new-pin-again"), first)
        app.tid("set-pin-submit").click()
        app.gone("[role=dialog]", "the set-PIN dialog")
        app.nav("Connections")
        app.button("Log out").click()

        # The Crypto Officer's next login: the change is asked for at once.
        app.tid("login-button").click()
        app.fill(app.tid("pin-input"), first)
        app.tid("login-submit").click()
        must = app.tid("pin-must-change")
        check("policy 21" in must.text, must.text)
        app.shot("admin-pin-must-change")
        app.fill(app.tid("old-pin"), first)
        app.fill(app.tid("new-pin"), second)
        app.fill(app.tid("new-pin-again"), second)
        app.tid("change-pin-submit").click()
        app.gone("[role=dialog]", "the change-PIN dialog")
        app.wait(lambda: app.tid("audit-badge").get_attribute("data-state") == "unlocked", "the audit trail to unlock")
        app.nav("Connections")
        app.button("Log out").click()
        app.tid("login-button").click()
        app.fill(app.tid("pin-input"), first)
        app.dismiss_notices()
        app.tid("login-submit").click()
        app.alert_with("The PIN is incorrect")
        app.fill(app.tid("pin-input"), second)
        # The notices of the last steps sit over the dialog's buttons.
        app.dismiss_notices()
        app.tid("login-submit").click()
        app.gone("[role=dialog]", "the login dialog")
        check(not app.css("[data-testid=pin-must-change]"), "the new PIN is not flagged")

        # A key, its public key out, a certificate issued for it by a CA made here.
        app.nav("Keys")
        app.tid("generate-key").click()
        Select(app.tid("preset")).select_by_value("ec-p256")
        app.fill(app.tid("key-label"), "e2e_codesign")
        app.tid("generate-submit").click()
        app.gone("[role=dialog]", "the generate dialog")
        rows = app.wait(lambda: len(app.css("[data-testid=key-row][data-label='e2e_codesign']")) == 2 and app.css("[data-testid=key-row][data-label='e2e_codesign']"), "the key pair")
        next(r for r in rows if "private key" in r.text).click()
        # The notices of the login and the generation stack up in the bottom right corner,
        # over the details pane's Show PEM: a click there while they show reaches a notice.
        app.dismiss_notices()
        app.tid("export-pem").click()
        pem = app.wait(lambda: app.tid("pem-text").get_attribute("value"), "the PEM")
        ca = Path(tempfile.mkdtemp(prefix="e2e-ca-"))
        (ca / "pub.pem").write_text(pem)
        for cmd in (
            ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-subj", "/CN=e2e root", "-days", "30"],
            ["x509", "-new", "-force_pubkey", "pub.pem", "-subj", "/CN=e2e codesign", "-CA", "ca.pem", "-CAkey", "ca.key", "-days", "30", "-out", "leaf.pem"],
        ):
            r = subprocess.run(["openssl", *cmd], cwd=ca, capture_output=True, text=True)
            check(r.returncode == 0, r.stderr)
        app.button("Certificate…").click()
        app.tid("import-issued").click()
        app.fill(app.tid("import-path"), str(ca / "leaf.pem"))
        app.tid("import-run").click()
        result = app.wait(lambda: (lambda e: e if e and "e2e_codesign" in e.text else None)(next(iter(app.css("[data-testid=import-result]")), None)), "the import result")
        check("e2e codesign" in result.text, result.text)
        app.shot("admin-certificate-imported")
        app.button("Close").click()
        app.wait(lambda: len([d for d in app.css("[role=dialog]") if d.is_displayed()]) == 1, "the import dialog to close")
        # The certificate dialog under it closes with Escape, as every dialog does.
        app.d.switch_to.active_element.send_keys(Keys.ESCAPE)
        app.gone("[role=dialog]", "the certificate dialog")

        # A new label, then the URI with it, copied.
        rows = app.wait(lambda: app.css("[data-testid=key-row][data-label='e2e_codesign']"), "the key rows")
        next(r for r in rows if "private key" in r.text).click()
        app.tid("edit-attributes").click()
        app.fill(app.tid("attr-label"), "e2e_codesign_2026")
        app.tid("attr-save").click()
        app.wait(lambda: app.css("[data-testid=key-row][data-label='e2e_codesign_2026']"), "the new label in the table")
        uri = app.wait(lambda: (lambda t: t if t.startswith("pkcs11:") else None)(app.tid("object-uri").text), "the key's URI")
        check("object=e2e_codesign_2026" in uri and "type=private" in uri, uri)
        app.tid("copy-uri").click()
        app.wait(lambda: any("Copied" in e.text for e in app.css("[role=status], .toast")), "the copy to be confirmed")
        app.shot("admin-uri")
        app.d.switch_to.active_element.send_keys(Keys.ESCAPE)
        app.gone("[role=dialog]", "the URI dialog")

        # The HSM reconnects and numbers its objects anew (lunasim's `renumber`) while the
        # edit dialog holds the key's handle: the save renames the key chosen, found again
        # by its Luna OUID, and no other object.
        control = data / "builtin" / "control.jsonl"
        labels = lambda: Counter(r.get_attribute("data-label") for r in app.css("[data-testid=key-row]"))
        before = labels()
        check(before["e2e_codesign_2026"] == 1, str(before))
        rows = app.wait(lambda: app.css("[data-testid=key-row][data-label='e2e_codesign_2026']"), "the key row")
        rows[0].click()
        app.tid("edit-attributes").click()
        app.tid("attr-label")
        with control.open("a") as c:
            c.write(json.dumps({"op": "renumber", "enabled": True}) + "\n")
            c.write(json.dumps({"op": "fail", "function": "*", "rv": "CKR_DEVICE_REMOVED", "count": 1}) + "\n")
        time.sleep(0.2)
        app.fill(app.tid("attr-label"), "e2e_codesign_renumbered")
        app.tid("attr-save").click()
        app.wait(lambda: app.css("[data-testid=key-row][data-label='e2e_codesign_renumbered']"), "the new label after the renumbering reconnect")
        with control.open("a") as c:
            c.write(json.dumps({"op": "renumber", "enabled": False}) + "\n")
        after = labels()
        expected = before - Counter({"e2e_codesign_2026": 1}) + Counter({"e2e_codesign_renumbered": 1})
        check(after == expected, f"only the chosen key is renamed: {before} -> {after}")
        app.shot("admin-renumbered-edit")
        print("e2e: administration ok (PIN to be changed, certificate import, label, URI, edit across a renumbering reconnect)")
    except Exception:
        app.shot("admin-failure")
        raise
    finally:
        app.quit()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--app", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--artifacts", required=True)
    a = ap.parse_args()
    artifacts = Path(a.artifacts)
    artifacts.mkdir(parents=True, exist_ok=True)
    # The steps after the first run, each on the data the ones before left; E2E_ONLY=ha
    # (or admin) runs that step alone, on fresh data: for chasing one failure. The kill -9
    # step signs with the first run's key, so it has no E2E_ONLY name.
    steps = [
        (None, "kill -9", kill_9_while_signing),
        ("ha", "HA group", ha_group_with_a_member_down),
        ("admin", "administration", administer),
    ]
    only = os.environ.get("E2E_ONLY")
    if only:
        steps = [s for s in steps if s[0] == only]
        check(bool(steps), f"E2E_ONLY={only}: no such step")
        Path(a.data).mkdir(parents=True, exist_ok=True)
    else:
        app = App(a.app, artifacts)
        try:
            run(app, Path(a.data))
        except AssertionError as e:
            app.shot("failure")
            print(f"e2e FAILED: {e}", file=sys.stderr)
            return 1
        finally:
            app.quit()
    for _, name, step in steps:
        try:
            step(a.app, artifacts, Path(a.data))
        except AssertionError as e:
            print(f"e2e FAILED ({name}): {e}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
