"""Encrypted sync between devices through storage people already run (a folder, an S3 bucket).

targets.py   the one small interface every target implements, and `open_target`
folder.py    a plain folder (Syncthing, Dropbox, a NAS mount, a USB disk)
s3.py        any S3-compatible store, through boto3
sealing.py   what leaves: bundles, heads and the join record, sealed with keys from the vault key
revtree.py   revision trees per record, the deterministic winner and the conflicts
hlc.py       the hybrid logical clock that orders revisions without trusting wall clocks
state.py     this device's sync state, kept sealed inside the vault
chains.py    reading other devices' chains from a target and checking every link
merge.py     local edits into revisions, pulled revisions into the trees, winners and kept losers
run.py       one sync: pull, merge, apply, push
exclusive.py one sync of a vault at a time on this machine
join.py      `sync join`: a new device made from the target and the passphrase
registry.py  which target each vault of this home syncs with (no passphrase needed to read it)
types.py     the reports front ends get
"""
