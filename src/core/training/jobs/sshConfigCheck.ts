// What an ssh config file a target names (`"sshConfig"`, passed to ssh with -F) may say. A workspace's
// `.quarry/targets.json` comes with a cloned repository, so the file it names is untrusted input: ssh runs commands on
// this machine for some directives (ProxyCommand, LocalCommand, KnownHostsCommand, Match exec), loads libraries for
// others (PKCS11Provider, SecurityKeyProvider), and reads further unchecked files for Include. Those are refused, read
// line by line as ssh reads them: keywords in any case, `Key Value`, `Key=Value` and `Key = Value`, quoted values.
// Pure text in, a problem in words (or null) out; the caller reads the file. (The checkpoints side checks its own ssh
// options; the two can share this module.)

/** Directives with which ssh runs a program or loads code on this machine, or reads another file. */
const REFUSED: Record<string, string> = {
  proxycommand: 'runs a command on this machine',
  localcommand: 'runs a command on this machine',
  permitlocalcommand: 'lets LocalCommand run commands on this machine',
  knownhostscommand: 'runs a command on this machine',
  remotecommand: 'replaces the command Quarry runs',
  pkcs11provider: 'loads a library into ssh',
  securitykeyprovider: 'loads a library into ssh',
  smartcarddevice: 'loads a library into ssh',
  include: 'reads further config files, which are not checked',
};

/** The keyword and its arguments of one config line (null: blank or a comment). */
function sshConfigLine(line: string): { keyword: string; args: string[] } | null {
  const s = line.trim();
  if (s === '' || s.startsWith('#')) return null;
  // ssh splits the keyword from its value at the first run of whitespace and/or one '='.
  const m = /^([^\s=]+)\s*(?:=\s*|\s+)?(.*)$/.exec(s);
  if (!m) return null;
  const args: string[] = [];
  const re = /"([^"]*)"|(\S+)/g;
  for (let a = re.exec(m[2]); a !== null; a = re.exec(m[2])) args.push(a[1] ?? a[2]);
  return { keyword: m[1].toLowerCase(), args };
}

const JUMP_HOP =
  /^(?:ssh:\/\/)?(?:[A-Za-z0-9_.][A-Za-z0-9_.-]*@)?(?:[A-Za-z0-9_.][A-Za-z0-9_.-]*|\[[0-9A-Fa-f:.]+\])(?::\d+)?$/;

/** What in an ssh config file's text ssh would use to run commands here, or null. */
export function sshConfigProblem(text: string): string | null {
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = sshConfigLine(lines[i]);
    if (!line) continue;
    const at = `line ${i + 1}`;
    if (/[\0-\x08\x0b-\x1f\x7f]/.test(lines[i])) return `${at} holds a control character`;
    const why = REFUSED[line.keyword];
    if (why) return `${at}: ${line.keyword} ${why}`;
    if (line.keyword === 'match' && line.args.some((a) => /^!?exec(?:=|$)/i.test(a)))
      return `${at}: Match exec runs a command on this machine`;
    if (line.keyword === 'proxyjump') {
      const hops = line.args.join(' ');
      if (hops.toLowerCase() !== 'none' && !hops.split(',').every((h) => JUMP_HOP.test(h)))
        return `${at}: ProxyJump must list [user@]host[:port] hops`;
    }
  }
  return null;
}
