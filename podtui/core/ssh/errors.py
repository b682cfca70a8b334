"""SSH failures, each a sentence a person can act on."""


class SshError(Exception):
    pass


class Unreachable(SshError):
    pass


class AuthFailed(SshError):
    pass


class HostKeyChanged(SshError):
    pass


class ShellClosed(SshError):
    """The remote shell or the connection went away. `output` holds what a command printed before that."""

    def __init__(self, message: str, output: str = "") -> None:
        super().__init__(message)
        self.output = output


class RemoteTimeout(SshError):
    """A command did not finish in time. `output` holds what it printed so far."""

    def __init__(self, message: str, output: str = "", session_usable: bool = False) -> None:
        super().__init__(message)
        self.output = output
        self.session_usable = session_usable


class SshKeyError(SshError):
    """A key file podtui cannot use, or an account key list it will not resend."""
