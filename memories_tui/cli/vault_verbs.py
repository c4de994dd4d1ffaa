"""`init`, `tui` and the `vault` verbs: home folder, vault files, passphrases, policy."""

from __future__ import annotations

import sys

from ..errors import InputRefusedError, UsageError
from ..frontend.passphrase import MIN_PASSPHRASE_CHARS, get_passphrase, read_passphrase_file
from ..frontend.strength import estimate
from .context import Context
from .output import Payload, clean


def cmd_init(ctx: Context) -> Payload:
    report = ctx.engine.init_home()
    if not ctx.json:
        state = "created" if report.config_created else "already there, kept as it is"
        print(f"Home:   {clean(report.home)}\nConfig: {clean(report.config)} ({state})")
    return report.to_json()


def cmd_tui(ctx: Context) -> Payload:
    from ..tui.app import run_app  # Textual loads only for this verb

    if run_app(home=getattr(ctx.args, "home", None), config=getattr(ctx.args, "config", None)):
        sys.exit(1)  # the app stopped after an unexpected error (it printed one line saying so)
    return {}


def cmd_vault_create(ctx: Context) -> Payload:
    passphrase = get_passphrase(file=ctx.args.passphrase_file, confirm=True,
                                prompt=f"New passphrase for vault {ctx.args.name}: ")
    _check_strength(ctx, passphrase, ctx.args.allow_weak_passphrase)
    info = ctx.engine.create_vault(ctx.args.name, passphrase, device_only=ctx.args.device_only)
    payload: Payload = {"vault_id": info.vault_id, "name": info.name, "device_only": ctx.args.device_only}
    if not ctx.json:
        print(f"Created vault {clean(info.name)}  {ctx.bold(info.vault_id)}"
              + ("  (device-only)" if ctx.args.device_only else ""))
    return payload


def cmd_vault_list(ctx: Context) -> Payload:
    scan = ctx.engine.scan_vaults()
    vaults = scan.vaults
    if not ctx.json:
        if not vaults:
            print("No vaults yet. Create one with: memories vault create NAME")
        else:
            ctx.table(["VAULT_ID", "NAME", "RECORDS"], [[v.vault_id, v.name, v.record_count] for v in vaults])
            print(ctx.dim("(device-only flags are encrypted; `vault policy VAULT_ID` shows one after unlock)"))
        for problem in scan.problems:  # bad *.mvault files are reported beside the good vaults
            print(f"memories: warning: {clean(problem.file)} is not a usable vault ({problem.code}): "
                  f"{clean(problem.message)}", file=sys.stderr)
    # device_only is null: the flag is encrypted and unknown without the passphrase
    return {"vaults": [{**v.to_json(), "device_only": None} for v in vaults],
            "problems": [p.to_json() for p in scan.problems]}


def cmd_vault_passwd(ctx: Context) -> Payload:
    info = ctx.engine.resolve_vault(ctx.args.vault)
    old = get_passphrase(file=ctx.args.passphrase_file, prompt=f"Current passphrase for vault {info.name}: ")
    if ctx.args.new_passphrase_file:
        new = read_passphrase_file(ctx.args.new_passphrase_file)
        if not new:
            raise InputRefusedError("An empty passphrase is not allowed.", code="empty_passphrase")
    else:
        new = get_passphrase(confirm=True, prompt="New passphrase: ", environ={})
    _check_strength(ctx, new, ctx.args.allow_weak_passphrase)
    ctx.engine.change_passphrase(info.vault_id, old, new)
    if not ctx.json:
        print(f"Passphrase changed for vault {clean(info.name)} (records were not re-encrypted; the vault key was re-wrapped).")
    return {"vault_id": info.vault_id, "changed": True}


def _check_strength(ctx: Context, passphrase: str, allowed: bool) -> None:
    """Under 8 characters needs --allow-weak-passphrase; any other weak passphrase gets a warning."""
    if len(passphrase) < MIN_PASSPHRASE_CHARS and not allowed:
        raise UsageError(f"The passphrase is shorter than {MIN_PASSPHRASE_CHARS} characters; choose a longer one, "
                         "or confirm with --allow-weak-passphrase.")
    rated = estimate(passphrase)
    if rated.label == "weak":
        ctx.progress(f"warning: this passphrase is weak (~{rated.bits} bits): {rated.advice}")


def cmd_vault_policy(ctx: Context) -> Payload:
    vault_id = ctx.unlock(ctx.args.vault)
    if ctx.args.device_only is not None:
        ctx.engine.set_device_only(vault_id, ctx.args.device_only == "on")
    on = ctx.engine.device_only(vault_id)
    if not ctx.json:
        print(f"Vault {clean(ctx.engine.vault_name(vault_id))}: device-only is {'on' if on else 'off'}")
    return {"vault_id": vault_id, "device_only": on}
