// The notifications (state/toasts), shown in the window's corner.
import { useTranslation } from "react-i18next";
import { useToasts } from "../state";
import { ErrorBox } from "./feedback";

export function Toasts() {
  const { t } = useTranslation();
  const { toasts, dismiss } = useToasts();
  return (
    <div className="toasts" aria-live="polite">
      {toasts.map((x) => (
        <div key={x.id} className={`toast toast-${x.kind}`} role={x.kind === "error" ? "alert" : "status"}>
          <div className="toast-body">
            <span>{x.text}</span>
            {x.error && <ErrorBox error={x.error} />}
          </div>
          <button className="icon-button" onClick={() => dismiss(x.id)} aria-label={t("common.dismiss")}>
            ×
          </button>
        </div>
      ))}
    </div>
  );
}
