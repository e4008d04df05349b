// The header's indicator of a key generation left running in the background: the key's
// label and its progress (the share done, or the time taken when the module reports no
// progress). A click brings the Generate dialog back with the job in it.
import { useTranslation } from "react-i18next";
import { Badge } from "../../components";
import { useFormat } from "../../i18n";
import { useKeygen, useKeygenActions, useToast } from "../../state";
import { GenerateDialog } from "./GenerateDialog";
import { progressText } from "./presets";

export function KeygenIndicator() {
  const { t } = useTranslation();
  const fmt = useFormat();
  const toast = useToast();
  const { job, shown } = useKeygen();
  const { show, hide } = useKeygenActions();
  const p = job?.progress;
  return (
    <>
      {job?.state === "running" && (
        <button
          className="badge-button keygen-indicator"
          onClick={show}
          title={t("keygen.indicator_title", { label: job.label })}
          data-testid="keygen-indicator"
        >
          <Badge tone="info">
            {t("keygen.indicator", { label: job.label, progress: progressText(job, t, fmt, true) })}
            {p && p.total > 0 && (
              <span className="keygen-mini" aria-hidden="true">
                <span style={{ width: `${Math.min(100, (100 * p.done) / p.total)}%` }} />
              </span>
            )}
          </Badge>
        </button>
      )}
      {shown && job && (
        <GenerateDialog partitionId={job.partitionId} onClose={hide} onDone={(label) => toast("ok", t("keys.generated", { label }))} />
      )}
    </>
  );
}
