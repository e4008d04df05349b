// Remembered settings: theme, language, pool size, HSS thresholds, polling, the audit store,
// the time-stamp authority.
import { useState } from "react";
import { useTranslation } from "react-i18next";
import type { ApiError, Language, Settings } from "../../bindings";
import { ErrorBox, Field } from "../../components";
import i18n, { LANGUAGES } from "../../i18n";
import { api } from "../../ipc";
import { useSettings, useToast } from "../../state";
import { useCommand } from "../../useCommand";
import { AuditSection, numberOf, TimestampSection } from "./SettingsSections";

/// Checked here before anything is sent: an emptied number field.
function emptyNumber(): ApiError {
  return {
    code: "INVALID_INPUT",
    message: i18n.t("settings.empty_number"),
    details: null,
    suggestion: i18n.t("settings.empty_number_hint"),
    pkcs11: null,
  };
}

export function SettingsView() {
  const { t } = useTranslation();
  const { settings } = useSettings();
  if (!settings) return <p className="muted">{t("settings.loading")}</p>;
  // A fresh form whenever the stored settings change (after a save, or from elsewhere).
  return <SettingsForm settings={settings} key={JSON.stringify(settings)} />;
}

function SettingsForm({ settings }: { settings: Settings }) {
  const { t } = useTranslation();
  const { setSettings } = useSettings();
  const toast = useToast();
  const [draft, setDraft] = useState<Settings>(settings);
  const set = <K extends keyof Settings>(k: K, v: Settings[K]) => setDraft({ ...draft, [k]: v });
  const num = numberOf;
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
    if (bad) throw emptyNumber();
    setSettings(await api.updateSettings(draft));
    toast("ok", t("settings.saved"));
  });
  const dirty = JSON.stringify(draft) !== JSON.stringify(settings);
  return (
    <div className="view">
      <header className="view-header">
        <h1>{t("settings.title")}</h1>
        <div className="button-row">
          <button onClick={() => setDraft(settings)} disabled={!dirty || busy}>
            {t("settings.revert")}
          </button>
          <button className="primary" onClick={() => void save()} disabled={!dirty || busy} data-testid="settings-save">
            {t("settings.save")}
          </button>
        </div>
      </header>
      {error && <ErrorBox error={error} title={t("settings.not_saved")} />}
      <section className="card form-grid">
        <h2>{t("settings.appearance")}</h2>
        <Field label={t("settings.theme")}>
          <select
            value={draft.theme}
            onChange={(e) => set("theme", e.target.value as Settings["theme"])}
            aria-label={t("settings.theme")}
            data-testid="theme"
          >
            <option value="system">{t("settings.theme_system")}</option>
            <option value="light">{t("settings.theme_light")}</option>
            <option value="dark">{t("settings.theme_dark")}</option>
          </select>
        </Field>
        <Field label={t("settings.language")} hint={t("settings.language_hint")}>
          <select
            value={draft.language ?? ""}
            onChange={(e) => set("language", (e.target.value || null) as Language | null)}
            aria-label={t("settings.language")}
            data-testid="language"
          >
            <option value="">{t("settings.language_system")}</option>
            {LANGUAGES.map((l) => (
              <option key={l.id} value={l.id} lang={l.id}>
                {l.name}
              </option>
            ))}
          </select>
        </Field>
      </section>
      <section className="card form-grid">
        <h2>{t("settings.partitions")}</h2>
        <Field label={t("settings.pool_size")} hint={t("settings.pool_size_hint")}>
          <input
            type="number"
            min={1}
            max={64}
            value={draft.pool_size}
            onChange={(e) => set("pool_size", num(e.target.value))}
            aria-label={t("settings.pool_size")}
          />
        </Field>
        <Field label={t("settings.polling")} hint={t("settings.polling_hint")}>
          <input
            type="number"
            min={1}
            max={3600}
            value={draft.stats_poll_seconds}
            onChange={(e) => set("stats_poll_seconds", num(e.target.value))}
            aria-label={t("settings.polling_label")}
          />
        </Field>
        <label className="check">
          <input type="checkbox" checked={draft.builtin_enabled} onChange={(e) => set("builtin_enabled", e.target.checked)} />{" "}
          {t("settings.builtin")}
        </label>
        <Field label={t("settings.pqc_policy")} hint={t("settings.pqc_policy_hint")}>
          <input
            list="pqc-policies"
            value={draft.pqc_policy}
            onChange={(e) => set("pqc_policy", e.target.value)}
            aria-label={t("settings.pqc_policy")}
            data-testid="pqc-policy"
          />
          <datalist id="pqc-policies">
            <option value="nist">{t("settings.pqc_nist")}</option>
            <option value="cnsa2">{t("settings.pqc_cnsa2")}</option>
          </datalist>
        </Field>
      </section>
      <section className="card form-grid">
        <h2>{t("settings.hss")}</h2>
        <Field label={t("settings.hss_warning")}>
          <input
            type="number"
            min={0}
            max={100}
            step={0.1}
            value={draft.hss_warning_percent}
            onChange={(e) => set("hss_warning_percent", num(e.target.value))}
            aria-label={t("settings.hss_warning_label")}
          />
        </Field>
        <Field label={t("settings.hss_critical")}>
          <input
            type="number"
            min={0}
            max={100}
            step={0.1}
            value={draft.hss_critical_percent}
            onChange={(e) => set("hss_critical_percent", num(e.target.value))}
            aria-label={t("settings.hss_critical_label")}
          />
        </Field>
      </section>
      <AuditSection audit={draft.audit} onChange={(audit) => setDraft({ ...draft, audit })} />
      <TimestampSection timestamp={draft.timestamp} onChange={(timestamp) => setDraft({ ...draft, timestamp })} />
    </div>
  );
}
