// The probe's settings: what to call, how long or how often, with how many workers (or a
// sweep), the warm-up and the call profile; one `ProbeSettings` value, and the request it asks for.
import { useTranslation } from "react-i18next";
import type { CallProfile, ProbeChoice, ProbeMode, ProbeRequest } from "../../bindings";
import { Field } from "../../components";

const MODES = ["count", "duration", "rate"] as const;

export type ProbeSettings = {
  opName: string;
  modeKind: (typeof MODES)[number];
  calls: number;
  seconds: number;
  rate: number;
  /** One number, or a sweep: numbers separated by commas. */
  workers: string;
  warmup: number;
  profile: CallProfile;
};

export const DEFAULT_SETTINGS: ProbeSettings = {
  opName: "ecdsa-p256-sign",
  modeKind: "duration",
  calls: 1000,
  seconds: 5,
  rate: 100,
  workers: "1",
  warmup: 10,
  profile: "pool",
};

/** The request the settings ask for; null when the partition does not list the probe. */
export function requestOf(s: ProbeSettings, catalog: ProbeChoice[]): ProbeRequest | null {
  const choice = catalog.find((c) => c.name === s.opName);
  if (!choice) return null;
  const mode: ProbeMode =
    s.modeKind === "count"
      ? { mode: "count", calls: s.calls }
      : s.modeKind === "duration"
        ? { mode: "duration", seconds: s.seconds }
        : { mode: "rate", per_second: s.rate, seconds: s.seconds };
  const sweep = s.workers.includes(",")
    ? s.workers
        .split(",")
        .map((x) => Number(x.trim()))
        .filter((x) => x > 0)
    : [];
  return {
    op: choice.op,
    mode,
    workers: sweep.length ? 1 : Math.max(1, Number(s.workers) || 1),
    sweep,
    warmup: s.warmup,
    profile: s.profile,
  };
}

export function ProbeForm({
  settings,
  onChange,
  catalog,
  disabled,
}: {
  settings: ProbeSettings;
  onChange: (s: ProbeSettings) => void;
  catalog: ProbeChoice[];
  /** While a probe runs: what it runs cannot change under it. */
  disabled: boolean;
}) {
  const { t } = useTranslation();
  const set = (part: Partial<ProbeSettings>) => onChange({ ...settings, ...part });
  return (
    <section className="card form-grid">
      <Field label={t("probes.probe")}>
        <select
          value={settings.opName}
          onChange={(e) => set({ opName: e.target.value })}
          disabled={disabled}
          data-testid="probe-op"
          aria-label={t("probes.probe")}
        >
          {catalog.map((c) => (
            <option key={c.name} value={c.name} disabled={!c.offered}>
              {c.name}
              {c.offered ? "" : ` — ${t("probes.not_offered")}`}
            </option>
          ))}
        </select>
      </Field>
      <fieldset className="radio-row">
        <legend>{t("probes.mode")}</legend>
        {MODES.map((m) => (
          <label key={m}>
            <input type="radio" checked={settings.modeKind === m} onChange={() => set({ modeKind: m })} disabled={disabled} />{" "}
            {t(`probes.mode_${m}`)}
          </label>
        ))}
      </fieldset>
      {settings.modeKind === "count" ? (
        <Field label={t("probes.calls")}>
          <input
            type="number"
            min={1}
            value={settings.calls}
            onChange={(e) => set({ calls: Number(e.target.value) })}
            aria-label={t("probes.calls")}
          />
        </Field>
      ) : (
        <Field label={t("probes.seconds")}>
          <input
            type="number"
            min={0.1}
            step={0.5}
            value={settings.seconds}
            onChange={(e) => set({ seconds: Number(e.target.value) })}
            aria-label={t("probes.seconds_label")}
            data-testid="probe-seconds"
          />
        </Field>
      )}
      {settings.modeKind === "rate" && (
        <Field label={t("probes.rate")} hint={t("probes.rate_hint")}>
          <input
            type="number"
            min={0.1}
            value={settings.rate}
            onChange={(e) => set({ rate: Number(e.target.value) })}
            aria-label={t("probes.rate_label")}
          />
        </Field>
      )}
      <Field label={t("probes.workers")} hint={t("probes.workers_hint")}>
        <input
          type="text"
          value={settings.workers}
          onChange={(e) => set({ workers: e.target.value })}
          aria-label={t("probes.workers")}
          data-testid="probe-workers"
        />
      </Field>
      <Field label={t("probes.warmup")}>
        <input
          type="number"
          min={0}
          value={settings.warmup}
          onChange={(e) => set({ warmup: Number(e.target.value) })}
          aria-label={t("probes.warmup_label")}
        />
      </Field>
      <Field label={t("probes.profile")}>
        <select
          value={settings.profile}
          onChange={(e) => set({ profile: e.target.value as CallProfile })}
          data-testid="probe-profile"
          title={t("probes.profile_hint")}
        >
          <option value="pool">{t("probes.profile_pool")}</option>
          <option value="session-per-call">{t("probes.profile_session_per_call")}</option>
          <option value="find-per-call">{t("probes.profile_find_per_call")}</option>
        </select>
      </Field>
    </section>
  );
}
