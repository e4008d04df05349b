// Changing one's own PIN and setting another role's: the new PIN twice, checked against the
// token's length limits before it is sent.
import { useState } from "react";
import { useTranslation } from "react-i18next";
import type { TokenView, UserKind } from "../../bindings";
import { Dialog, ErrorBox, Field } from "../../components";
import i18n from "../../i18n";
import { api } from "../../ipc";
import { useToast } from "../../state";
import { useCommand } from "../../useCommand";
import { roleNames } from "./roles";
import { useRefresh } from "./useRefresh";

/// What a new PIN typed twice is missing, or null when it may be sent.
export function newPinProblem(pin: string, again: string, t: Pick<TokenView, "min_pin_len" | "max_pin_len">): string | null {
  const tr = i18n.t;
  if (!pin) return tr("credentials.type_new_pin");
  if (pin.length < t.min_pin_len) return tr("credentials.pin_too_short", { min: t.min_pin_len });
  if (t.max_pin_len > 0 && pin.length > t.max_pin_len) return tr("credentials.pin_too_long", { max: t.max_pin_len });
  if (pin !== again) return tr("credentials.pins_differ");
  return null;
}

export function NewPinFields({
  pin,
  again,
  setPin,
  setAgain,
  token,
}: {
  pin: string;
  again: string;
  setPin: (s: string) => void;
  setAgain: (s: string) => void;
  token: TokenView;
}) {
  const { t } = useTranslation();
  return (
    <>
      <Field label={t("credentials.new_pin")} hint={t("credentials.pin_range", { min: token.min_pin_len, max: token.max_pin_len })}>
        <input
          type="password"
          autoComplete="new-password"
          value={pin}
          onChange={(e) => setPin(e.target.value)}
          aria-label={t("credentials.new_pin")}
          data-testid="new-pin"
        />
      </Field>
      <Field label={t("credentials.new_pin_again")}>
        <input
          type="password"
          autoComplete="new-password"
          value={again}
          onChange={(e) => setAgain(e.target.value)}
          aria-label={t("credentials.new_pin_again")}
          data-testid="new-pin-again"
        />
      </Field>
    </>
  );
}

/// Change the PIN of the role logged in. `reason`: why the token wants it changed now.
export function ChangePinDialog({
  partitionId,
  token,
  user,
  reason,
  onClose,
}: {
  partitionId: string;
  token: TokenView;
  user: UserKind;
  reason?: string | null;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const toast = useToast();
  const refresh = useRefresh();
  const names = roleNames();
  const [old, setOld] = useState("");
  const [pin, setPin] = useState("");
  const [again, setAgain] = useState("");
  const problem = newPinProblem(pin, again, token);
  const changing = useCommand(async (o: string, n: string) => {
    const r = await api.changePin(partitionId, o, n);
    toast("ok", t("credentials.pin_changed", { role: names[user] }));
    if (r.audit.state === "unlocked") toast("info", t("credentials.audit_key_open"));
    await refresh();
    onClose();
  });
  const submit = async () => {
    if (problem || !old) return;
    const [o, n] = [old, pin];
    // The fields are cleared whatever happens; the PINs live only for this one call.
    setOld("");
    setPin("");
    setAgain("");
    await changing.run(o, n);
  };
  return (
    <Dialog
      title={t("credentials.change_title", { role: names[user] })}
      onClose={onClose}
      footer={
        <>
          <button onClick={onClose}>{reason ? t("credentials.later") : t("common.cancel")}</button>
          <button
            className="primary"
            onClick={() => void submit()}
            disabled={changing.loading || !old || problem !== null}
            data-testid="change-pin-submit"
          >
            {changing.loading ? t("credentials.changing") : t("credentials.change_pin")}
          </button>
        </>
      }
    >
      {reason && (
        <div className="notice warn" data-testid="pin-must-change">
          {reason}
        </div>
      )}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <Field label={t("credentials.current_pin")} hint={t("credentials.current_pin_hint")}>
          <input
            type="password"
            autoComplete="off"
            value={old}
            onChange={(e) => setOld(e.target.value)}
            aria-label={t("credentials.current_pin")}
            data-testid="old-pin"
          />
        </Field>
        <NewPinFields pin={pin} again={again} setPin={setPin} setAgain={setAgain} token={token} />
        {pin && problem && (
          <p className="muted small" data-testid="pin-problem">
            {problem}
          </p>
        )}
        <button type="submit" hidden aria-hidden="true" tabIndex={-1} />
      </form>
      {changing.error && <ErrorBox error={changing.error} title={t("credentials.not_changed")} />}
    </Dialog>
  );
}

/// The SO sets the user PIN, or the Crypto Officer a Luna role's PIN.
export function SetPinDialog({
  partitionId,
  token,
  target,
  onClose,
}: {
  partitionId: string;
  token: TokenView;
  target: "user" | "crypto_user" | "limited_crypto_officer";
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const toast = useToast();
  const refresh = useRefresh();
  const names = roleNames();
  const [pin, setPin] = useState("");
  const [again, setAgain] = useState("");
  const problem = newPinProblem(pin, again, token);
  const setting = useCommand(async (n: string) => {
    if (target === "user") await api.setUserPin(partitionId, n);
    else await api.setRolePin(partitionId, target, n);
    toast("ok", t("credentials.pin_set", { role: names[target] }));
    await refresh();
    onClose();
  });
  const submit = async () => {
    if (problem) return;
    const n = pin;
    setPin("");
    setAgain("");
    await setting.run(n);
  };
  return (
    <Dialog
      title={t("credentials.set_title", { role: names[target] })}
      onClose={onClose}
      footer={
        <>
          <button onClick={onClose}>{t("common.cancel")}</button>
          <button
            className="primary"
            onClick={() => void submit()}
            disabled={setting.loading || problem !== null}
            data-testid="set-pin-submit"
          >
            {setting.loading ? t("credentials.setting") : t("credentials.set_pin")}
          </button>
        </>
      }
    >
      <p className="muted small">{target === "user" ? t("credentials.set_user_pin_text") : t("credentials.set_role_pin_text")}</p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <NewPinFields pin={pin} again={again} setPin={setPin} setAgain={setAgain} token={token} />
        {pin && problem && <p className="muted small">{problem}</p>}
        <button type="submit" hidden aria-hidden="true" tabIndex={-1} />
      </form>
      {setting.error && <ErrorBox error={setting.error} title={t("credentials.not_set")} />}
    </Dialog>
  );
}
