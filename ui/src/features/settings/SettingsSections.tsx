// Two of the settings' sections: the audit trail's store, checkpoints and automatic
// verification; the time-stamp authority signatures are stamped by.
import { useTranslation } from "react-i18next";
import type { AutoVerify, Settings } from "../../bindings";
import { Field } from "../../components";

/// A number field's value; NaN when emptied (refused before saving).
export const numberOf = (v: string) => (v.trim() === "" ? NaN : Number(v));

export function AuditSection({ audit, onChange }: { audit: Settings["audit"]; onChange: (a: Settings["audit"]) => void }) {
  const { t } = useTranslation();
  const num = numberOf;
  return (
    <section className="card form-grid">
      <h2>{t("settings.audit")}</h2>
      <Field label={t("settings.store")} hint={t("settings.store_hint")}>
        <input
          type="text"
          value={audit.location ?? ""}
          onChange={(e) => onChange({ ...audit, location: e.target.value.trim() || null })}
          aria-label={t("settings.store_label")}
          spellCheck={false}
        />
      </Field>
      <Field label={t("settings.checkpoint_records")}>
        <input
          type="number"
          min={1}
          value={audit.checkpoint_every}
          onChange={(e) => onChange({ ...audit, checkpoint_every: num(e.target.value) })}
          aria-label={t("settings.checkpoint_records_label")}
        />
      </Field>
      <Field label={t("settings.checkpoint_minutes")}>
        <input
          type="number"
          min={1}
          value={audit.checkpoint_minutes}
          onChange={(e) => onChange({ ...audit, checkpoint_minutes: num(e.target.value) })}
          aria-label={t("settings.checkpoint_minutes_label")}
        />
      </Field>
      <Field label={t("settings.auto_verify")} hint={t("settings.auto_verify_hint")}>
        <select
          value={audit.auto_verify}
          onChange={(e) => onChange({ ...audit, auto_verify: e.target.value as AutoVerify })}
          aria-label={t("settings.auto_verify")}
        >
          <option value="off">{t("settings.auto_verify_off")}</option>
          <option value="hourly">{t("settings.auto_verify_hourly")}</option>
          <option value="daily">{t("settings.auto_verify_daily")}</option>
        </select>
      </Field>
    </section>
  );
}

export function TimestampSection({
  timestamp,
  onChange,
}: {
  timestamp: Settings["timestamp"];
  onChange: (a: Settings["timestamp"]) => void;
}) {
  const { t } = useTranslation();
  const num = numberOf;
  return (
    <section className="card form-grid">
      <h2>{t("settings.tsa_title")}</h2>
      <label className="check">
        <input
          type="checkbox"
          checked={timestamp.enabled}
          onChange={(e) => onChange({ ...timestamp, enabled: e.target.checked })}
          data-testid="tsa-enabled"
        />{" "}
        {t("settings.tsa_enabled")}
      </label>
      <Field label={t("settings.tsa_url")} hint={t("settings.tsa_url_hint")}>
        <input
          type="text"
          value={timestamp.url}
          onChange={(e) => onChange({ ...timestamp, url: e.target.value })}
          aria-label={t("settings.tsa_url_label")}
          data-testid="tsa-url"
          spellCheck={false}
        />
      </Field>
      <Field label={t("settings.tsa_ca")} hint={t("settings.tsa_ca_hint")}>
        <input
          type="text"
          value={timestamp.ca_file ?? ""}
          onChange={(e) => onChange({ ...timestamp, ca_file: e.target.value.trim() || null })}
          aria-label={t("settings.tsa_ca_label")}
          spellCheck={false}
        />
      </Field>
      <Field label={t("settings.tsa_timeout")} hint={t("settings.tsa_timeout_hint")}>
        <input
          type="number"
          min={1}
          max={300}
          value={timestamp.timeout_seconds}
          onChange={(e) => onChange({ ...timestamp, timeout_seconds: num(e.target.value) })}
          aria-label={t("settings.tsa_timeout_label")}
        />
      </Field>
      <label className="checkbox">
        <input
          type="checkbox"
          checked={timestamp.optional}
          onChange={(e) => onChange({ ...timestamp, optional: e.target.checked })}
          data-testid="tsa-optional"
        />{" "}
        {t("settings.tsa_optional")}
      </label>
    </section>
  );
}
