"""The certificates of a Dask cluster with mutual TLS (`ssdlab fleet certs DIR`), and the
`distributed.security.Security` of one of its roles made from them.

A private CA signs three certificates, one per role: `scheduler`, `worker` (every worker's,
the same one) and `client` (`ssdlab sweep --tls DIR`). Each side of every connection shows
its certificate and accepts only one signed by the CA (Dask sets CERT_REQUIRED both ways), so
only holders of one of these keys can talk to the cluster at all. The CA's own key is not
kept: nothing more can be signed with it, and renewing or adding a host is a new set
(`--force`) handed out again.

What the certificates do not do:
- Dask does not check host names (check_hostname is off: clusters are addressed by IP); the
  SubjectAltNames (`--host`, plus 127.0.0.1 and localhost) are for other tools and for the
  record. Who may connect is decided by the CA alone.
- Dask does not tell roles apart: any certificate of the CA can connect as a client, a
  worker or a scheduler.
- Anyone holding a certificate and its key can run any code on the scheduler and every
  worker, as the user they run as. Dask sends tasks as pickles and unpickles them on the
  scheduler (the task graph) and on the worker, and pickle runs code as it loads: no check
  made after that (a worker plugin or preload allowing only ssdlab's task) can refuse what a
  crafted pickle does while it loads, and Dask has no option to refuse pickles. The client's
  and workers' keys are therefore as sensitive as a login to those hosts.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import re
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ssdlab.errors import SsdlabError

ROLES = ("scheduler", "worker", "client")
CA_FILE = "ca.pem"
DAYS_DEFAULT, DAYS_MAX = 365, 3650
# every certificate names these too: a cluster tried on one machine first
LOOPBACK = ("127.0.0.1", "localhost")
MAKES_THEM = "`ssdlab fleet certs DIR` makes them"
HOST_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}))*\.?")


def cert_file(directory: Path, role: str) -> Path:
    return directory / f"{role}.pem"


def key_file(directory: Path, role: str) -> Path:
    return directory / f"{role}-key.pem"


def cert_files(directory: Path) -> list[Path]:
    """Every file `make_certs` writes in `directory`."""
    return [directory / CA_FILE] + [f(directory, role) for role in ROLES for f in (cert_file, key_file)]


@dataclass(frozen=True)
class Made:
    files: list[Path]
    hosts: list[str]
    not_after: datetime.datetime


def make_certs(directory: Path, hosts: list[str], days: int = DAYS_DEFAULT, force: bool = False) -> Made:
    """A new CA and the certificate of every role in `directory` (made 0700 if new; keys
    0600), each valid `days` and naming `hosts` and the loopback; existing files are refused
    unless `force`."""
    from cryptography.hazmat.primitives.asymmetric import ec

    if not 1 <= days <= DAYS_MAX:
        raise SsdlabError(f"--days must be 1 to {DAYS_MAX}, not {days}")
    names = list(dict.fromkeys([*(_host(h) for h in hosts), *LOOPBACK]))
    files = cert_files(directory)
    if not force and (there := [str(f) for f in files if f.exists() or f.is_symlink()]):
        raise SsdlabError(f"{', '.join(there)} already exist: --force replaces them (every host then needs "
                          "the new ones)")
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise SsdlabError(f"cannot make {directory}: {exc}") from None
    now = datetime.datetime.now(datetime.UTC)
    # a few minutes back: the hosts' clocks may differ a little
    not_before, not_after = now - datetime.timedelta(minutes=5), now + datetime.timedelta(days=days)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _certificate("ssdlab cluster CA", ca_key.public_key(), ca_key, None, not_before, not_after, names=None)
    _write(directory / CA_FILE, _pem(ca), 0o644)
    for role in ROLES:
        key = ec.generate_private_key(ec.SECP256R1())
        cert = _certificate(f"ssdlab {role}", key.public_key(), ca_key, ca, not_before, not_after, names)
        _write(key_file(directory, role), _key_pem(key), 0o600)
        _write(cert_file(directory, role), _pem(cert), 0o644)
    return Made(files, names, not_after)


def cluster_security(directory: Path, role: str = "client") -> Any:
    """The Security of `role` (client, worker, scheduler) from the files of `directory`:
    encryption required, the CA's certificates only; a file missing, unreadable or not
    matching its key is refused with what makes them."""
    from distributed.security import Security

    ca, cert, key = directory / CA_FILE, cert_file(directory, role), key_file(directory, role)
    for path in (ca, cert, key):
        try:
            path.read_bytes()
        except OSError as exc:
            raise SsdlabError(f"cannot read the {role}'s TLS files in {directory}: {exc.strerror}: {path}; "
                              f"{MAKES_THEM}") from None
    try:  # what Dask would find only when it connects
        ssl.create_default_context(cafile=str(ca)).load_cert_chain(str(cert), str(key))
    except (ssl.SSLError, ValueError) as exc:
        raise SsdlabError(f"the {role}'s TLS files in {directory} are not a CA, a certificate and its key "
                          f"({exc}); {MAKES_THEM}") from None
    return Security(require_encryption=True, tls_ca_file=str(ca), **{f"tls_{role}_cert": str(cert),
                                                                     f"tls_{role}_key": str(key)})


def _host(host: str) -> str:
    if not (_is_ip(host) or HOST_NAME.fullmatch(host)):
        raise SsdlabError(f"--host {host!r} is not a host name or an IP address")
    return host


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return False


def _certificate(name: str, public_key: Any, ca_key: Any, ca: Any, not_before: datetime.datetime,
                 not_after: datetime.datetime, names: list[str] | None) -> Any:
    """The CA's own certificate (`ca` None), or a role's signed by it, for both ends of a
    connection (every Dask process both listens and connects)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    subject = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "ssdlab"),
                         x509.NameAttribute(NameOID.COMMON_NAME, name)])
    is_ca = ca is None
    builder = (x509.CertificateBuilder()
               .subject_name(subject).issuer_name(subject if is_ca else ca.subject)
               .public_key(public_key).serial_number(x509.random_serial_number())
               .not_valid_before(not_before).not_valid_after(not_after)
               .add_extension(x509.BasicConstraints(ca=is_ca, path_length=0 if is_ca else None), critical=True)
               .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=is_ca, crl_sign=is_ca,
                                            content_commitment=False, key_encipherment=False,
                                            data_encipherment=False, key_agreement=False, encipher_only=False,
                                            decipher_only=False), critical=True)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
               .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                              critical=False))
    if not is_ca:
        builder = builder.add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        builder = builder.add_extension(x509.SubjectAlternativeName(
            [x509.IPAddress(ipaddress.ip_address(n)) if _is_ip(n) else x509.DNSName(n) for n in names or ()]),
            critical=False)
    return builder.sign(ca_key, hashes.SHA256())


def _pem(cert: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization
    return cert.public_bytes(serialization.Encoding.PEM)


def _key_pem(key: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _write(path: Path, data: bytes, mode: int) -> None:
    """`data` in `path` with `mode` from its creation on (a key is never readable by others,
    not even for a moment); a file there (--force) replaced, not written through."""
    try:
        if path.is_symlink() or path.exists():
            path.unlink()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        with os.fdopen(fd, "wb") as out:
            os.fchmod(out.fileno(), mode)  # the umask may have taken bits off
            out.write(data)
    except OSError as exc:
        raise SsdlabError(f"cannot write {path}: {exc.strerror}") from None
