// After a batch: how many signatures were made with which keys, HSS signatures left, the
// manifest's and the kit's outputs.
import { useTranslation } from "react-i18next";
import type { SignReport as Report } from "../../bindings";
import { Badge, ErrorBox } from "../../components";
import { useFormat } from "../../i18n";

export function SignReport({ report }: { report: Report }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  return (
    <section className="card" data-testid="sign-report">
      <h2>{t("sign.summary")}</h2>
      <p>
        {report.keys.length > 1
          ? t("sign.summary_keys", {
              count: report.signatures_made,
              keys: report.keys.map((k) => `${k.key.label} (${k.key.algorithm})`).join(", "),
            })
          : t("sign.summary_text", { count: report.signatures_made, label: report.key.label, algorithm: report.key.algorithm })}
        {report.keys.length > 1
          ? report.keys
              .filter((k) => k.hss_remaining_after !== null)
              .map((k) => ` ${t("sign.hss_left_after_key", { label: k.key.label, n: fmt.number(k.hss_remaining_after ?? 0) })}`)
          : report.hss_remaining_after !== null && ` ${t("sign.hss_left_after", { n: fmt.number(report.hss_remaining_after) })}`}
        {report.stopped && ` ${t("sign.stopped")}`}
        {report.cancelled && ` ${t("errors.cancelled")}`}
      </p>
      {report.manifest.map((o) => (
        <div key={o.path} className="small">
          <Badge tone="ok">{o.format.replace("_", " ")}</Badge> {o.path}
        </div>
      ))}
      {report.manifest_error && <ErrorBox error={report.manifest_error} />}
      {report.kit && (
        <div className="small" data-testid="sign-kit">
          <Badge tone="ok">{t("sign.kit_written")}</Badge>{" "}
          {t("sign.kit_summary", { dir: report.kit.dir, files: report.kit.files.length, checks: report.kit.checks.length })}
        </div>
      )}
      {report.kit_error && <ErrorBox error={report.kit_error} title={t("sign.kit_not_written")} />}
    </section>
  );
}
