// The trail's key: the checkpoints it signed (each signature checked in Rust), its public
// key's export, and its rotation.
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import type { CheckpointView } from "../../bindings";
import { Badge, Dialog } from "../../components";
import { api } from "../../ipc";
import { useAudit, useToast } from "../../state";
import { useCommand } from "../../useCommand";

export function Checkpoints() {
  const { t } = useTranslation();
  const { audit } = useAudit();
  const toast = useToast();
  const [checkpoints, setCheckpoints] = useState<CheckpointView[] | null>(null);
  // Every checkpoint's signature is checked in Rust: reload when there is a new one or the
  // key's holder logs in or out, not on every record.
  const checkpointCount = audit?.checkpoints;
  const keyState = audit?.key.state;
  useEffect(() => {
    let live = true;
    api.auditCheckpoints().then(
      (c) => live && setCheckpoints(c),
      () => live && setCheckpoints(null),
    );
    return () => {
      live = false;
    };
  }, [checkpointCount, keyState]);
  const { run: exportKey } = useCommand(
    async () => {
      const pem = await api.auditPublicKey();
      const p = await api.saveExport("audit-checkpoint-key.pem", "pem", { text: pem });
      if (p) toast("ok", t("common.saved", { path: p }));
    },
    { errorToast: t("common.export_failed") },
  );
  return (
    <section className="card" data-testid="checkpoints">
      <header className="card-header">
        <h2>{t("audit.checkpoints")}</h2>
        <button onClick={() => void exportKey()}>{t("audit.export_key")}</button>
      </header>
      {checkpoints && checkpoints.length > 0 ? (
        <table className="table compact">
          <thead>
            <tr>
              <th>#</th>
              <th>{t("audit.cp_up_to")}</th>
              <th>{t("audit.col_time")}</th>
              <th>{t("audit.col_epoch")}</th>
              <th>{t("audit.col_algorithm")}</th>
              <th>{t("audit.key")}</th>
              <th>{t("audit.cp_signature")}</th>
            </tr>
          </thead>
          <tbody>
            {checkpoints
              .slice()
              .reverse()
              .slice(0, 200)
              .map((c) => (
                <tr key={c.checkpoint_no}>
                  <td>{c.checkpoint_no}</td>
                  <td>{c.seq}</td>
                  <td>{c.time}</td>
                  <td>{c.epoch}</td>
                  <td>{c.algorithm}</td>
                  <td className="mono small" title={c.key_fingerprint}>
                    {c.key_fingerprint.slice(0, 20)}…{" "}
                    {c.key_is_hsm_key === true ? (
                      <Badge tone="ok">{t("audit.cp_hsm_key")}</Badge>
                    ) : c.key_is_hsm_key === false ? (
                      <Badge tone="bad">{t("audit.cp_not_hsm_key")}</Badge>
                    ) : null}
                  </td>
                  <td>
                    {c.signature_valid ? (
                      <Badge tone="ok">{t("audit.cp_valid")}</Badge>
                    ) : (
                      <Badge tone="bad">{c.problem ?? t("audit.cp_invalid")}</Badge>
                    )}
                  </td>
                </tr>
              ))}
          </tbody>
        </table>
      ) : (
        <p className="muted">{t("audit.no_checkpoint_yet")}</p>
      )}
    </section>
  );
}

export function RotateKeyDialog({ onClose }: { onClose: () => void }) {
  const { t } = useTranslation();
  const toast = useToast();
  const { run: doRotate } = useCommand(
    async () => {
      const epoch = await api.auditRotateKey();
      toast("ok", t("audit.rotated", { epoch }));
      onClose();
    },
    { errorToast: t("audit.not_rotated") },
  );
  return (
    <Dialog
      title={t("audit.rotate_title")}
      onClose={() => onClose()}
      footer={
        <>
          <button onClick={() => onClose()}>{t("common.cancel")}</button>
          <button className="primary" onClick={() => void doRotate()} data-testid="rotate-confirm">
            {t("audit.rotate")}
          </button>
        </>
      }
    >
      <p>{t("audit.rotate_text")}</p>
    </Dialog>
  );
}
