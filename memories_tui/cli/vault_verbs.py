"""`init`, `tui` and the `vault` verbs: home folder, vault files, passphrases, policy."""

from __future__ import annotations

import sys

from ..errors import ErrorCode, InputRefusedError, MemoriesError, UsageError
from ..i18n import _, msg
from .context import Context
from .output import Payload, clean


def cmd_init(ctx: Context) -> Payload:
    report = ctx.engine.init_home()
    if not ctx.json:
        state = _("created") if report.config_created else _("already there, kept as it is")
        print(_("Home:   {home}\nConfig: {config} ({state})").format(
            home=clean(report.home), config=clean(report.config), state=state))
    return report.to_json()


def cmd_tui(ctx: Context) -> Payload:
    from ..tui.app import run_app  # Textual loads only for this verb

    if run_app(home=getattr(ctx.args, "home", None), config=getattr(ctx.args, "config", None)):
        sys.exit(1)  # the app stopped after an unexpected error (it printed one line saying so)
    return {}


def cmd_vault_create(ctx: Context) -> Payload:
    from ..frontend.passphrase import get_passphrase

    passphrase = get_passphrase(file=ctx.args.passphrase_file, confirm=True,
                                prompt=_("New passphrase for vault {name}: ").format(name=ctx.args.name))
    _check_strength(ctx, passphrase, ctx.args.allow_weak_passphrase)
    info = ctx.engine.create_vault(ctx.args.name, passphrase, device_only=ctx.args.device_only)
    payload: Payload = {"vault_id": info.vault_id, "name": info.name, "device_only": ctx.args.device_only}
    if not ctx.json:
        print(_("Created vault {name}  {vault_id}").format(name=clean(info.name), vault_id=ctx.bold(info.vault_id))
              + ("  " + _("(device-only)") if ctx.args.device_only else ""))
    return payload


def cmd_vault_list(ctx: Context) -> Payload:
    scan = ctx.engine.scan_vaults()
    vaults = scan.vaults
    if not ctx.json:
        if not vaults:
            print(_("No vaults yet. Create one with: memories vault create NAME"))
        else:
            ctx.table([_("VAULT_ID"), _("NAME"), _("RECORDS")], [[v.vault_id, v.name, v.record_count] for v in vaults])
            print(ctx.dim(_("(device-only flags are encrypted; `vault policy VAULT_ID` shows one after unlock)")))
        for problem in scan.problems:  # bad *.mvault files are reported beside the good vaults
            print(_("memories: warning: {file} is not a usable vault ({code}): {problem}").format(
                file=clean(problem.file), code=problem.code, problem=clean(problem.localized())),
                file=sys.stderr)
    # device_only is null: the flag is encrypted and unknown without the passphrase
    return {"vaults": [{**v.to_json(), "device_only": None} for v in vaults],
            "problems": [p.to_json() for p in scan.problems]}


def cmd_vault_passwd(ctx: Context) -> Payload:
    info = ctx.engine.resolve_vault(ctx.args.vault)
    from ..frontend.passphrase import get_passphrase, read_passphrase_file

    old = get_passphrase(file=ctx.args.passphrase_file,
                         prompt=_("Current passphrase for vault {name}: ").format(name=info.name))
    if ctx.args.new_passphrase_file:
        new = read_passphrase_file(ctx.args.new_passphrase_file)
        if not new:
            raise InputRefusedError(msg("An empty passphrase is not allowed."), code=ErrorCode.EMPTY_PASSPHRASE)
    else:
        new = get_passphrase(confirm=True, prompt=_("New passphrase: "), environ={})
    _check_strength(ctx, new, ctx.args.allow_weak_passphrase)
    lagging: MemoriesError | None = None
    try:
        ctx.engine.change_passphrase(info.vault_id, old, new)
    except MemoriesError as exc:
        if exc.code != ErrorCode.SYNC_JOIN_RECORD_STALE:
            raise
        lagging = exc  # changed: only the sync target's copy waits (for the next sync), a warning, not a failure
    if not ctx.json:
        print(_("Passphrase changed for vault {name} (records were not re-encrypted; the vault key was "
                "re-wrapped).").format(name=clean(info.name)))
        if lagging is not None:
            ctx.progress(_("warning: {problem}").format(problem=lagging.localized()))
    out: dict[str, object] = {"vault_id": info.vault_id, "changed": True}
    if lagging is not None:
        out["warning"] = {"code": lagging.code, "message": lagging.message}
    return out


def _check_strength(ctx: Context, passphrase: str, allowed: bool) -> None:
    from ..frontend.passphrase import MIN_PASSPHRASE_CHARS
    from ..frontend.strength import estimate

    """Under 8 characters needs --allow-weak-passphrase; any other weak passphrase gets a warning."""
    if len(passphrase) < MIN_PASSPHRASE_CHARS and not allowed:
        raise UsageError(msg("The passphrase is shorter than {min_passphrase_chars} characters; choose a "
                             "longer one, or confirm with --allow-weak-passphrase.",
                             min_passphrase_chars=MIN_PASSPHRASE_CHARS))
    rated = estimate(passphrase)
    if rated.label == "weak":
        ctx.progress(_("warning: this passphrase is weak (~{bits} bits): {advice}").format(
            bits=rated.bits, advice=rated.advice))


def cmd_vault_policy(ctx: Context) -> Payload:
    vault_id = ctx.unlock(ctx.args.vault)
    if ctx.args.device_only is not None:
        ctx.engine.set_device_only(vault_id, ctx.args.device_only == "on")
    on = ctx.engine.device_only(vault_id)
    if not ctx.json:
        text = _("Vault {name}: device-only is on") if on else _("Vault {name}: device-only is off")
        print(text.format(name=clean(ctx.engine.vault_name(vault_id))))
    return {"vault_id": vault_id, "device_only": on}
