// Files dropped on the window go to the Sign view's queue: the overlay while they are
// dragged over it.
import { getCurrentWebview } from "@tauri-apps/api/webview";
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { useNavigate, useSignQueue } from "./state";

/// Files dropped anywhere on the window go to the Sign view.
export function DropTarget() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const { setSignFiles } = useSignQueue();
  const [over, setOver] = useState(false);
  useEffect(() => {
    let unlisten: (() => void) | undefined;
    let gone = false;
    void getCurrentWebview()
      .onDragDropEvent((e) => {
        const p = e.payload;
        if (p.type === "enter" || p.type === "over") setOver(true);
        else if (p.type === "leave") setOver(false);
        else if (p.type === "drop") {
          setOver(false);
          if (p.paths.length) {
            setSignFiles((old) => [...old, ...p.paths.filter((x) => !old.includes(x))]);
            navigate("sign");
          }
        }
      })
      .then((u) => {
        if (gone) u();
        else unlisten = u;
      })
      .catch(() => undefined);
    return () => {
      gone = true;
      unlisten?.();
    };
  }, [setSignFiles, navigate]);
  if (!over) return null;
  return (
    <div className="drop-overlay" aria-hidden="true">
      {t("app.drop_to_sign")}
    </div>
  );
}
