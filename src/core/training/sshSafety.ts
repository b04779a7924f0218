// What of ssh's command line may come from a workspace file (.quarry/models.json, which a cloned repository can carry)
// or be kept in one: an ssh destination that cannot be read as an option, and options from an allow-list that can
// neither run a command on this machine (ProxyCommand, LocalCommand, KnownHostsCommand, Match exec, a -F config file
// that may hold any of them, -J jumps), nor weaken the host-key check, open forwardings, or write files. Anything
// else is refused with the option named; the user's own ~/.ssh/config is where such settings belong.

/** `-o` keys that only tune a connection the user's config already allows. Case-insensitive, as ssh reads them. */
const SAFE_O_KEYS: ReadonlyMap<string, RegExp> = new Map([
  ['batchmode', /^yes$/i],
  ['stricthostkeychecking', /^yes$/i],
  ['connecttimeout', /^\d{1,4}$/],
  ['connectionattempts', /^\d{1,2}$/],
  ['serveraliveinterval', /^\d{1,5}$/],
  ['serveralivecountmax', /^\d{1,3}$/],
  ['tcpkeepalive', /^(yes|no)$/i],
  ['exitonforwardfailure', /^yes$/i],
  ['compression', /^(yes|no)$/i],
  ['addressfamily', /^(any|inet|inet6)$/i],
  ['loglevel', /^(quiet|fatal|error|info|verbose)$/i],
  ['port', /^\d{1,5}$/],
  ['user', /^[A-Za-z0-9_][\w.-]{0,63}$/],
  ['identityfile', /^[^-\s%$][^\s%$]*$/],
  ['identitiesonly', /^(yes|no)$/i],
  ['pubkeyauthentication', /^(yes|no)$/i],
  ['passwordauthentication', /^no$/i],
]);

const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Why `host` is not an ssh destination Quarry passes on, or null. A destination starts with a letter, digit or `_`
 * (never `-`, which ssh would read as an option) and holds only what host names, users, IPv6 brackets and ports use.
 */
export function sshDestinationProblem(host: string): string | null {
  if (typeof host !== 'string' || host.length === 0) return 'must be an ssh destination (a host name or user@host)';
  if (host.startsWith('-')) return `must not start with '-' (ssh would read ${JSON.stringify(host)} as an option)`;
  if (host.length > 255 || !/^[A-Za-z0-9_[][\w.@:%[\]-]*$/.test(host))
    return `${JSON.stringify(host)} is not an ssh destination (letters, digits and . _ - @ : [ ] only)`;
  return null;
}

/** Why one `-o` value (`Key=Value` or `Key Value`) is refused, or null. */
function oProblem(kv: string): string | null {
  const m = /^([A-Za-z]+)(?:\s*=\s*|\s+)(.*)$/.exec(kv);
  if (!m) return `-o ${JSON.stringify(kv)} is not Key=Value`;
  const allowed = SAFE_O_KEYS.get(m[1].toLowerCase());
  if (!allowed)
    return (
      `the ssh option ${m[1]} is not allowed here (allowed: ${[...SAFE_O_KEYS.keys()].join(', ')}; ` +
      'an option that can run a command, like ProxyCommand, is never taken from a workspace file)'
    );
  if (!allowed.test(m[2])) return `the ssh option ${m[1]}=${JSON.stringify(m[2])} has a value that is not allowed`;
  return null;
}

/** Flags taking a value that are allowed, and what the value must look like. */
const SAFE_VALUED: ReadonlyMap<string, RegExp> = new Map([
  ['-p', /^\d{1,5}$/],
  ['-l', /^[A-Za-z0-9_][\w.-]{0,63}$/],
  ['-i', /^[^-\s%$][^\s%$]*$/],
]);
/** Flags without a value that are allowed. */
const SAFE_FLAGS = new Set(['-4', '-6', '-C', '-q']);

/**
 * Why a list of ssh options is refused, or null: each is `-o Key=Value` (or `-oKey=Value`) with an allow-listed key,
 * `-p PORT`, `-l USER`, `-i KEYFILE` (joined or apart), or one of -4 -6 -C -q. Nothing else: no -F, -J, -E, -S, -L,
 * -R, -D, -W, -w, -A, no ProxyCommand and no other key off the list.
 */
export function sshOptionsProblem(options: readonly unknown[]): string | null {
  for (let i = 0; i < options.length; i++) {
    const o = options[i];
    if (typeof o !== 'string') return 'ssh options must be strings';
    if (CONTROL.test(o)) return `the ssh option ${JSON.stringify(o)} holds a control character`;
    if (SAFE_FLAGS.has(o)) continue;
    if (o === '-o' || SAFE_VALUED.has(o)) {
      const v = options[i + 1];
      if (typeof v !== 'string' || CONTROL.test(v)) return `${o} needs a value after it`;
      i++;
      const p = o === '-o' ? oProblem(v) : SAFE_VALUED.get(o)!.test(v) ? null : `${o} ${JSON.stringify(v)} is refused`;
      if (p) return p;
      continue;
    }
    if (o.startsWith('-o')) {
      const p = oProblem(o.slice(2));
      if (p) return p;
      continue;
    }
    const flag = o.slice(0, 2);
    const joined = SAFE_VALUED.get(flag);
    if (joined && o.length > 2) {
      if (!joined.test(o.slice(2))) return `${flag} ${JSON.stringify(o.slice(2))} is refused`;
      continue;
    }
    return (
      `the ssh option ${JSON.stringify(o)} is not allowed here (allowed: -o Key=Value for ` +
      `${[...SAFE_O_KEYS.keys()].join(', ')}; -p, -l, -i, -4, -6, -C, -q; a config file (-F), a jump host (-J) ` +
      'or a command is set in your own ~/.ssh/config instead)'
    );
  }
  return null;
}
