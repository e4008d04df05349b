// Logging in to a token as one of its roles (Luna's four, or user and SO), with the PIN
// asked for here and cleared as soon as the call is made.
import { useState } from "react";
import { useTranslation } from "react-i18next";
import type { TokenView, UserKind } from "../../bindings";
import { Dialog, ErrorBox, Field } from "../../components";
import { api } from "../../ipc";
import { useToast } from "../../state";
import { useCommand } from "../../useCommand";
import { ChangePinDialog } from "../credentials/PinDialogs";
import { roleNameText, roleNames } from "../credentials/roles";
import { useRefresh } from "../credentials/useRefresh";

/// The roles a login offers: Luna's four on a Luna-family module, else user and SO.
export const LUNA_ROLES: UserKind[] = ["user", "crypto_user", "limited_crypto_officer", "so"];
export const PLAIN_ROLES: UserKind[] = ["user", "so"];

export function LoginDialog({
  partitionId,
  label,
  token,
  luna = false,
  onClose,
}: {
  partitionId: string;
  label: string;
  token?: TokenView | null;
  luna?: boolean;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const toast = useToast();
  const refresh = useRefresh();
  const names = roleNames();
  const [user, setUser] = useState<UserKind>("user");
  const [pin, setPin] = useState("");
  // After a login the token wants the PIN changed first: the change is offered at once.
  const [mustChange, setMustChange] = useState<{ user: UserKind; reason: string } | null>(null);
  const {
    run: logIn,
    loading: busy,
    error,
  } = useCommand(async (entered: string) => {
    const r = await api.login(partitionId, user, entered);
    const role = user === "so" ? "connections.logged_in_so" : user === "user" ? "connections.logged_in_user" : null;
    toast("ok", role ? t(role, { label }) : t("connections.logged_in_role", { label, role: roleNameText(r.role_name) }));
    if (r.audit.state === "locked") toast("info", t("connections.audit_stays_locked", { holder: r.audit.holder }));
    await refresh();
    // Where the dialog knows the token (Connections), the change is offered at once.
    if (r.pin_to_be_changed && token) setMustChange({ user: r.user, reason: r.pin_change_reason ?? t("credentials.token_wants_change") });
    else onClose();
  });
  if (mustChange && token)
    return <ChangePinDialog partitionId={partitionId} token={token} user={mustChange.user} reason={mustChange.reason} onClose={onClose} />;
  const submit = async () => {
    if (!pin) return;
    const entered = pin;
    // The field is cleared whatever happens; the PIN lives only for this one call.
    setPin("");
    await logIn(entered);
  };
  return (
    <Dialog
      title={t("connections.log_in_to", { label })}
      onClose={onClose}
      footer={
        <>
          <button onClick={onClose}>{t("common.cancel")}</button>
          <button className="primary" onClick={() => void submit()} disabled={busy || !pin} data-testid="login-submit">
            {busy ? t("connections.logging_in") : t("connections.log_in")}
          </button>
        </>
      }
    >
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <fieldset className="radio-row">
          <legend>{t("connections.role")}</legend>
          {(luna ? LUNA_ROLES : PLAIN_ROLES).map((r) => (
            <label key={r}>
              <input type="radio" name="role" checked={user === r} onChange={() => setUser(r)} data-testid={`role-${r}`} /> {names[r]}
            </label>
          ))}
        </fieldset>
        <Field label={t("connections.pin")} hint={t("connections.pin_hint")}>
          <input
            type="password"
            autoComplete="off"
            value={pin}
            onChange={(e) => setPin(e.target.value)}
            data-testid="pin-input"
            aria-label={t("connections.pin")}
          />
        </Field>
      </form>
      {error && <ErrorBox error={error} title={t("connections.login_refused")} />}
    </Dialog>
  );
}
