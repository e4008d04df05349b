// The trail's actions (export, checkpoint, key rotation, verification) and the progress of a
// verification under way.
import { useTranslation } from "react-i18next";
import type { ExportFormat } from "../../bindings";
import { ProgressBar } from "../../components";
import { useFormat } from "../../i18n";
import { api } from "../../ipc";
import { useToast } from "../../state";
import { useCommand } from "../../useCommand";
import { toIso } from "./AuditFilters";

/** A verification under way: its job (to cancel it) and how far it got. */
export type VerifyRun = { job: string; done: number; total: number };

export function TrailActions({
  from,
  to,
  unlocked,
  verifying,
  onVerify,
  onRotate,
}: {
  /** The date filter (YYYY-MM-DD or empty): when set, the exported range. */
  from: string;
  to: string;
  unlocked: boolean;
  verifying: boolean;
  onVerify: () => void;
  onRotate: () => void;
}) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const toast = useToast();
  const { run: exportTrail } = useCommand(
    async (format: ExportFormat) => {
      // The date filter, when set, is the exported range; otherwise the whole trail.
      const s = await api.auditExport(format, { from_time: toIso(from, false), to_time: toIso(to, true) });
      if (s) toast("ok", t("audit.exported", { count: s.records, records: fmt.number(s.records), path: s.path }));
    },
    { errorToast: t("common.export_failed") },
  );

  const { run: checkpoint } = useCommand(
    async () => {
      const c = await api.auditCheckpoint();
      toast("ok", t("audit.checkpoint_signed", { no: c.checkpoint_no, algorithm: c.algorithm, seq: c.seq }));
    },
    { errorToast: t("audit.no_checkpoint") },
  );

  return (
    <div className="button-row">
      <button
        onClick={() => void exportTrail("jsonl")}
        data-testid="export-jsonl"
        title={from || to ? t("audit.export_range_title") : t("audit.export_all_title")}
      >
        {from || to ? t("audit.export_jsonl_range") : t("audit.export_jsonl")}
      </button>
      <button onClick={() => void exportTrail("csv")} data-testid="export-csv">
        {from || to ? t("audit.export_csv_range") : t("audit.export_csv")}
      </button>
      <button onClick={() => void checkpoint()} disabled={!unlocked}>
        {t("audit.checkpoint_now")}
      </button>
      <button onClick={onRotate} disabled={!unlocked} data-testid="rotate-key">
        {t("audit.rotate_key")}
      </button>
      <button
        className="primary"
        onClick={onVerify}
        disabled={verifying || !unlocked}
        data-testid="verify-trail"
        title={unlocked ? t("audit.verify_title") : t("audit.verify_locked_title")}
      >
        {t("audit.verify_trail")}
      </button>
    </div>
  );
}

export function VerifyProgress({ verify }: { verify: VerifyRun }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  return (
    <div className="inline-form">
      <ProgressBar
        done={verify.done}
        total={verify.total}
        label={
          verify.total > 0
            ? t("audit.verifying_n", { done: fmt.number(verify.done), total: fmt.number(verify.total) })
            : t("audit.verifying")
        }
      />
      <button onClick={() => void api.cancelJob(verify.job)} data-testid="cancel-verify">
        {t("common.cancel")}
      </button>
    </div>
  );
}
