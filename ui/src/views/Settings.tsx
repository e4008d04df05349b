// Remembered settings: theme, pool size, HSS thresholds, polling, the audit store, the
// time-stamp authority.
import { useState } from "react";
import type { ApiError, AutoVerify, Settings } from "../bindings";
import { ErrorBox, Field } from "../components";
import { api } from "../ipc";
import { useSettings, useToast } from "../state";
import { useCommand } from "../useCommand";

/// Checked here before anything is sent: an emptied number field.
const EMPTY_NUMBER: ApiError = {
  code: "INVALID_INPUT",
  message: "Every number field needs a number.",
  details: null,
  suggestion: "Fill in the empty fields or press Revert.",
  pkcs11: null,
};

export function SettingsView() {
  const { settings } = useSettings();
  if (!settings) return <p className="muted">Loading settings…</p>;
  // A fresh form whenever the stored settings change (after a save, or from elsewhere).
  return <SettingsForm settings={settings} key={JSON.stringify(settings)} />;
}

function SettingsForm({ settings }: { settings: Settings }) {
  const { setSettings } = useSettings();
  const toast = useToast();
  const [draft, setDraft] = useState<Settings>(settings);
  const set = <K extends keyof Settings>(k: K, v: Settings[K]) => setDraft({ ...draft, [k]: v });
  const num = (v: string) => (v.trim() === "" ? NaN : Number(v));
  const {
    run: save,
    loading: busy,
    error,
  } = useCommand(async () => {
    const bad = [
      draft.pool_size,
      draft.stats_poll_seconds,
      draft.hss_warning_percent,
      draft.hss_critical_percent,
      draft.audit.checkpoint_every,
      draft.audit.checkpoint_minutes,
      draft.timestamp.timeout_seconds,
    ].some((n) => !Number.isFinite(n));
    if (bad) throw EMPTY_NUMBER;
    setSettings(await api.updateSettings(draft));
    toast("ok", "Settings saved.");
  });
  const dirty = JSON.stringify(draft) !== JSON.stringify(settings);
  return (
    <div className="view">
      <header className="view-header">
        <h1>Settings</h1>
        <div className="button-row">
          <button onClick={() => setDraft(settings)} disabled={!dirty || busy}>
            Revert
          </button>
          <button className="primary" onClick={() => void save()} disabled={!dirty || busy} data-testid="settings-save">
            Save
          </button>
        </div>
      </header>
      {error && <ErrorBox error={error} title="Not saved" />}
      <section className="card form-grid">
        <h3>Appearance</h3>
        <Field label="Theme">
          <select
            value={draft.theme}
            onChange={(e) => set("theme", e.target.value as Settings["theme"])}
            aria-label="Theme"
            data-testid="theme"
          >
            <option value="system">Follow the system</option>
            <option value="light">Light</option>
            <option value="dark">Dark</option>
          </select>
        </Field>
      </section>
      <section className="card form-grid">
        <h3>Partitions</h3>
        <Field label="Sessions per partition" hint="1–64. Applies to partitions opened from now on.">
          <input
            type="number"
            min={1}
            max={64}
            value={draft.pool_size}
            onChange={(e) => set("pool_size", num(e.target.value))}
            aria-label="Sessions per partition"
          />
        </Field>
        <Field label="Statistics polling (seconds)" hint="1–3600.">
          <input
            type="number"
            min={1}
            max={3600}
            value={draft.stats_poll_seconds}
            onChange={(e) => set("stats_poll_seconds", num(e.target.value))}
            aria-label="Statistics polling"
          />
        </Field>
        <label className="check">
          <input type="checkbox" checked={draft.builtin_enabled} onChange={(e) => set("builtin_enabled", e.target.checked)} /> Offer the
          built-in lunasim partition (a software emulator) — at the next start
        </label>
      </section>
      <section className="card form-grid">
        <h3>HSS/LMS keys</h3>
        <Field label="Warn below (% of signatures left)">
          <input
            type="number"
            min={0}
            max={100}
            step={0.1}
            value={draft.hss_warning_percent}
            onChange={(e) => set("hss_warning_percent", num(e.target.value))}
            aria-label="HSS warning threshold"
          />
        </Field>
        <Field label="Critical below (% left)">
          <input
            type="number"
            min={0}
            max={100}
            step={0.1}
            value={draft.hss_critical_percent}
            onChange={(e) => set("hss_critical_percent", num(e.target.value))}
            aria-label="HSS critical threshold"
          />
        </Field>
      </section>
      <section className="card form-grid">
        <h3>Audit trail</h3>
        <Field
          label="Store"
          hint="Empty: audit.db in the data folder. A SQLite file path or a postgres:// URL; checked when you save; takes effect at the next start."
        >
          <input
            type="text"
            value={draft.audit.location ?? ""}
            onChange={(e) => set("audit", { ...draft.audit, location: e.target.value.trim() || null })}
            aria-label="Audit store"
            spellCheck={false}
          />
        </Field>
        <Field label="Checkpoint every (records)">
          <input
            type="number"
            min={1}
            value={draft.audit.checkpoint_every}
            onChange={(e) => set("audit", { ...draft.audit, checkpoint_every: num(e.target.value) })}
            aria-label="Checkpoint every records"
          />
        </Field>
        <Field label="…or every (minutes)">
          <input
            type="number"
            min={1}
            value={draft.audit.checkpoint_minutes}
            onChange={(e) => set("audit", { ...draft.audit, checkpoint_minutes: num(e.target.value) })}
            aria-label="Checkpoint every minutes"
          />
        </Field>
        <Field label="Verify automatically" hint="While the trail's key is open; the header shows the last verdict.">
          <select
            value={draft.audit.auto_verify}
            onChange={(e) => set("audit", { ...draft.audit, auto_verify: e.target.value as AutoVerify })}
            aria-label="Verify automatically"
          >
            <option value="off">off</option>
            <option value="hourly">hourly</option>
            <option value="daily">daily</option>
          </select>
        </Field>
      </section>
      <section className="card form-grid">
        <h3>Timestamp authority</h3>
        <label className="check">
          <input
            type="checkbox"
            checked={draft.timestamp.enabled}
            onChange={(e) => set("timestamp", { ...draft.timestamp, enabled: e.target.checked })}
            data-testid="tsa-enabled"
          />{" "}
          Time-stamp CMS and bundle signatures (RFC 3161)
        </label>
        <Field
          label="URL"
          hint="http:// or https://. Each answer is checked before its token is kept; a TSA that does not answer fails the file."
        >
          <input
            type="text"
            value={draft.timestamp.url}
            onChange={(e) => set("timestamp", { ...draft.timestamp, url: e.target.value })}
            aria-label="Timestamp authority URL"
            data-testid="tsa-url"
            spellCheck={false}
          />
        </Field>
        <Field label="CA file (PEM)" hint="Optional: the TSA's certificate must chain to it.">
          <input
            type="text"
            value={draft.timestamp.ca_file ?? ""}
            onChange={(e) => set("timestamp", { ...draft.timestamp, ca_file: e.target.value.trim() || null })}
            aria-label="Timestamp authority CA file"
            spellCheck={false}
          />
        </Field>
        <Field label="Timeout (seconds)" hint="1–300.">
          <input
            type="number"
            min={1}
            max={300}
            value={draft.timestamp.timeout_seconds}
            onChange={(e) => set("timestamp", { ...draft.timestamp, timeout_seconds: num(e.target.value) })}
            aria-label="Timestamp authority timeout"
          />
        </Field>
      </section>
    </div>
  );
}
