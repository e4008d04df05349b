// What the Audit view shows about the whole trail: its status, the verification's verdict,
// records per day.
import { useTranslation } from "react-i18next";
import type { AuditStatusView, DayCount, Verdict } from "../../bindings";
import { Badge } from "../../components";
import { BarChart, type BarSpec } from "../../charts/Chart";
import { findingText, useFormat } from "../../i18n";

/// Days shown in the records-per-day chart; successes in the first series colour, failures red.
export const DAYS = 30;
export const DAY_COLORS: BarSpec["colors"] = [0, "bad"];

export function VerdictBox({ v }: { v: Verdict }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  if (v.verdict === "intact") {
    return (
      <div className="verdict ok" role="status" data-testid="verdict" data-verdict="intact">
        <strong>{t("audit.intact")}</strong> {t("audit.intact_detail", { records: fmt.number(v.records), checkpoints: v.checkpoints })}
        {v.last_checkpoint
          ? t("audit.intact_last_checkpoint", {
              no: v.last_checkpoint.checkpoint_no,
              time: fmt.dateTime(v.last_checkpoint.time),
              algorithm: v.last_checkpoint.algorithm,
            })
          : ""}
        .{!v.key_pinned && ` ${t("audit.key_from_store")}`}
      </div>
    );
  }
  return (
    <div className="verdict bad" role="alert" data-testid="verdict" data-verdict="broken">
      <strong>{t("audit.broken_at", { seq: v.first_bad_seq })}</strong> {findingText(v.finding, v.explanation)}
      <div className="muted small">
        {t("audit.finding", { kind: t(`audit.finding_kinds.${v.finding.kind}`), checked: fmt.number(v.records_checked) })}
      </div>
    </div>
  );
}

/// Records per day, failures in their own colour; a click on a day filters the table to it.
export function DaysChart({ days, day, onDay }: { days: DayCount[]; day: string | null; onDay: (d: string | null) => void }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const label = (d: string) =>
    fmt
      .date(`${d}T12:00:00Z`)
      .replace(/,? \d{4}$/, "")
      .replace(/^\d{4}\D/, "");
  return (
    <BarChart
      testId="audit-days"
      exportName="audit-records-per-day"
      lines={11}
      spec={{
        title: t("audit.per_day_title", { days: days.length }),
        x: { label: t("audit.per_day_x"), format: (v) => String(v) },
        y: { label: t("audit.per_day_y"), format: (v) => fmt.number(v) },
        bars: days.map((d) => ({ label: label(d.day), values: [d.records - d.failures, d.failures] })),
        names: [t("audit.per_day_ok"), t("audit.per_day_failed")],
        colors: DAY_COLORS,
      }}
      selected={day ? days.findIndex((d) => d.day === day) : null}
      onSelect={(i) => onDay(i === null ? null : (days[i]?.day ?? null))}
    />
  );
}

/// The trail's store, its key's state, records, the last verification and the checkpoints.
export function AuditStatus({ audit }: { audit: AuditStatusView }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  return (
    <dl className="info-grid audit-status" data-testid="audit-status">
      <div>
        <dt>{t("audit.store")}</dt>
        <dd>
          {audit.store} · {audit.location}
        </dd>
      </div>
      <div>
        <dt>{t("audit.trail")}</dt>
        <dd className="mono">{audit.log_id}</dd>
      </div>
      <div>
        <dt>{t("audit.key")}</dt>
        <dd>
          {audit.key.state === "unlocked" ? (
            <Badge tone="ok">{t("audit.key_unlocked", { epoch: audit.key.epoch, holder: audit.key.holder })}</Badge>
          ) : audit.key.state === "locked" ? (
            <Badge tone="warn">{t("audit.key_locked", { holder: audit.key.holder })}</Badge>
          ) : (
            <Badge tone="warn">{t("audit.key_none")}</Badge>
          )}
        </dd>
      </div>
      <div>
        <dt>{t("audit.records")}</dt>
        <dd>
          {fmt.number(audit.records)}
          {audit.pending > 0 && ` ${t("audit.pending", { count: audit.pending })}`}
        </dd>
      </div>
      <div>
        <dt>{t("audit.last_verification")}</dt>
        <dd data-testid="last-verification">
          {audit.last_verification ? (
            <>
              <Badge tone={audit.last_verification.intact ? "ok" : "bad"}>
                {audit.last_verification.intact
                  ? t("audit.lv_intact")
                  : t("audit.lv_broken", { seq: audit.last_verification.first_bad_seq })}
              </Badge>{" "}
              {fmt.dateTime(audit.last_verification.at)} ({t(`audit.trigger_${audit.last_verification.trigger}`)})
            </>
          ) : (
            t("audit.lv_none")
          )}
          <div className="muted small">{t("audit.automatic", { schedule: t(`settings.auto_verify_${audit.auto_verify}`) })}</div>
        </dd>
      </div>
      <div>
        <dt>{t("audit.checkpoints")}</dt>
        <dd>
          {audit.checkpoints}
          {audit.last_checkpoint_time &&
            ` · ${t("audit.last_checkpoint", { time: audit.last_checkpoint_time, seq: audit.last_checkpoint_seq })}`}
        </dd>
      </div>
    </dl>
  );
}
