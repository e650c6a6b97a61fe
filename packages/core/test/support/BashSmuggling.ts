/**
 * A generated corpus of attempts to smuggle a second command (or a file write) past the rule
 * `Bash(echo:*)`, built combinatorially: the hidden command's name spelled in every quoting form
 * (single, double, ANSI-C hex and octal, backslash, concatenation), hidden behind every separator,
 * substitution, subshell, function, heredoc, comment and line-continuation trick, plus redirections
 * and environment prefixes. Each case says whether `Bash(echo:*)` should allow it: a case is allowed
 * only when bash would run nothing but `echo` and write nothing.
 */

/** One attempt and whether `Bash(echo:*)` must allow it. */
export interface Case {
  readonly command: string
  readonly allowed: boolean
}

/** `touch`, spelled every way bash reads as `touch`. */
export const TOUCH_SPELLINGS: ReadonlyArray<string> = [
  "touch", "'touch'", "\"touch\"", "$'touch'", "$'\\x74ouch'", "$'\\164ouch'", "$'\\u0074ouch'", "t\\ouch", "to''uch",
  "\"to\"uch", "$'to'\"uch\"", "\\touch"
]

/** Inside double quotes the payload is text, but one with a `$` is judged an expansion (no static value). */
const quotedText = (p: string) => !p.includes("$")

/** Ways to hide the payload `p` (run as `p pwned`); `true` when bash would still run only `echo` (and the parser can tell). */
const HIDINGS: ReadonlyArray<readonly [(p: string) => string, boolean | ((p: string) => boolean)]> = [
  ...[";", " ; ", "&&", "||", "|", "|&", "&", "\n", "\r\n", " &\n", ";\n\n"].map((sep) =>
    [(p: string) => `echo hi${sep}${p} pwned`, false] as const
  ),
  [(p) => `${p} pwned; echo hi`, false],
  [(p) => `echo $(${p} pwned)`, false],
  [(p) => `echo \`${p} pwned\``, false],
  [(p) => `echo "$(${p} pwned)"`, false],
  [(p) => `echo "a\`${p} pwned\`b"`, false],
  [(p) => `echo <(${p} pwned)`, false],
  [(p) => `echo >(${p} pwned)`, false],
  [(p) => `echo $(( $(${p} pwned) ))`, false],
  [(p) => `echo \${x:-$(${p} pwned)}`, false],
  [(p) => `echo a$(${p} pwned)b`, false],
  [(p) => `(${p} pwned)`, false],
  [(p) => `{ ${p} pwned; }`, false],
  [(p) => `echo hi; (${p} pwned)`, false],
  [(p) => `echo hi && { ${p} pwned; }`, false],
  [(p) => `f() { ${p} pwned; }; f`, false],
  [(p) => `echo() { ${p} pwned; }; echo hi`, false],
  [(p) => `if true; then ${p} pwned; fi`, false],
  [(p) => `for i in 1; do ${p} pwned; done`, false],
  [(p) => `eval ${p} pwned`, false],
  [(p) => `echo hi | xargs ${p}`, false],
  [(p) => `exec ${p} pwned`, false],
  [(p) => `[[ $(${p} pwned) ]]`, false],
  [(p) => `! ${p} pwned`, false],
  [(p) => `${p} pwned <<< hi`, false],
  [(p) => `echo hi <<EOF\n$(${p} pwned)\nEOF`, false],
  [(p) => `echo hi <<'EOF' | ${p} pwned\nx\nEOF`, false],
  [(p) => `NODE_ENV=$(${p} pwned) echo hi`, false],
  [(p) => `echo hi > >(${p} pwned)`, false],
  // A comment that swallows a quote: the next line runs.
  [(p) => `echo hi #'\n${p} pwned #'`, false],
  [(p) => `echo hi #"\n${p} pwned #"`, false],
  [(p) => `echo hi # \\\n${p} pwned`, false],
  [(p) => `echo hi;#\n${p} pwned`, false],
  // `#` inside a word is not a comment: the quote it seems to hide really opens.
  [(p) => `echo a#'\n${p} pwned'`, true],
  [(p) => `echo 'a'#'\n${p} pwned'`, true],
  // ANSI-C quoting: `\'` does not end the string, a hex-escaped quote is text.
  [(p) => `echo $'\\''; ${p} pwned; echo ''`, false],
  [(p) => `echo $'a\\'; ${p} pwned #'`, true],
  [(p) => `echo $'\\x27'; ${p} pwned`, false],
  [(p) => `echo $'\\n${p} pwned'`, true],
  [(p) => `echo "a\\"; ${p} pwned #"`, quotedText],
  [(p) => `echo 'a\\'; ${p} pwned #'`, false],
  // Line continuations join lines: the payload becomes echo's argument.
  [(p) => `echo hi \\\n${p} pwned`, true],
  [(p) => `echo hi\\\n;${p} pwned`, false],
  [(p) => `echo "hi\n${p} pwned"`, quotedText],
  [(p) => `echo hi\\;${p} pwned`, true],
  [(p) => `echo hi \\| ${p} pwned`, true]
]

/** Redirections: `true` when they write nothing. */
const REDIRECTS: ReadonlyArray<readonly [string, boolean]> = [
  [">/dev/null", true], ["2>/dev/null", true], ["2>&1", true], [">&2", true], ["&>/dev/null", true],
  [">>/dev/null", true], ["1>/dev/null 2>&1", true], [">'/dev/null'", true], [">\"/dev/null\"", true],
  [">/dev/nul\\l", true], [">$'/dev/null'", true], ["> /dev/null", true],
  [">/dev/nullx", false], [">/dev/null/../pwned", false], [">&1pwned", false], [">pwned", false],
  [">>pwned", false], ["2>pwned", false], ["&>pwned", false], [">|pwned", false], ["<pwned", false],
  ["<>pwned", false], [">&-", false], ["3>pwned", false], [">/dev/null>pwned", false], [">$HOME/pwned", false],
  [">~/pwned", false], [">/dev/null*", false], [">{pwned,x}", false], ["2>&1pwned", false], [">&2pwned", false],
  [">\"$(touch pwned)\"", false], ["&>>pwned", false], [">& pwned", false], ["1>&2-", false]
]

/** Environment prefixes: `true` when harmless. */
const ENVS: ReadonlyArray<readonly [string, boolean]> = [
  ["NODE_ENV=test", true], ["LANG=C", true], ["LC_ALL='C'", true], ["NODE_ENV=test LANG=C", true],
  ["FOO=bar", false], ["PATH=.", false], ["BASH_ENV=pwned", false], ["LD_PRELOAD=./x.so", false], ["IFS=x", false],
  ["NODE_ENV+=x", false], ["NODE_ENV=$HOME", false], ["ENV=pwned", false], ["GIT_DIR=x", false], ["NODE_ENV=`x`", false]
]

/** `echo hi` written every way, and lookalikes: `true` when it is `echo` with static words. */
const ECHOES: ReadonlyArray<readonly [string, boolean]> = [
  ["echo hi", true], ["\"echo\" hi", true], ["'ec'ho hi", true], ["$'\\x65cho' hi", true], ["e\\cho hi", true],
  ["\"ec\"\"ho\" hi", true], ["$'ec'\"ho\" hi", true], ["\\echo hi", true], ["$'\\145cho' hi", true],
  ["echo", true], ["echo hi # ; touch pwned", true], ["echo 'a; touch pwned'", true], ["echo \"a && touch pwned\"", true],
  ["echo *", true], ["echo {a,b}", true], ["echo ~", true], ["echo \\$HOME", true], ["echo '$HOME'", true],
  ["echo \"\\$HOME\"", true], ["echo hi &", true], ["echo a && echo b || echo c | echo d", true],
  ["echo hi\n\necho ho", true], ["  echo   hi  ", true], ["echo hi;", true], ["echo -n hi", true],
  ["ech\"o hi\"", false], ["ec*o hi", false], ["ec?o hi", false], ["{echo,hi}", false], ["$e\"cho\" hi", false],
  ["echox hi", false], ["echo-x hi", false], ["echo $HOME", true], ["echo ${HOME}", true], ["echo \"$HOME\"", true], ["echo \"a $HOME b$1\" $@", true],
  ["echo ${HOME:-x}", false], ["echo ${x:$y}", false], ["echo ${!x}", false], ["echo \"${x/a/b}\"", false],
  ["$HOME hi", false], ["ec$x hi", false], ["${x}echo hi", false], ["echo \"$x$(touch pwned)\"", false],
  ["echo $((1+1))", false], ["echo $'\\cA'", false], ["echo $\"hi\"", false], ["echo hi; touch pwned", false],
  ["echo \"hi", false], ["echo 'hi", false], ["echo hi)", false], ["echo hi &&", false], ["echo $(", false],
  ["time echo hi", false], ["(echo hi)", false], ["{ echo hi; }", false], ["echo hi\u0000; touch pwned", false],
  ["echo hi\u001b; touch pwned", false], ["", false], ["# echo", false]
]

/** The whole corpus. */
export const corpus = (): ReadonlyArray<Case> => [
  ...TOUCH_SPELLINGS.flatMap((p) => HIDINGS.map(([hide, allowed]) => ({
    command: hide(p),
    allowed: typeof allowed === "boolean" ? allowed : allowed(p)
  }))),
  ...REDIRECTS.flatMap(([r, allowed]) => [
    { command: `echo hi ${r}`, allowed },
    { command: `${r} echo hi`, allowed },
    { command: `echo hi ${r} && echo ho`, allowed }
  ]),
  ...ENVS.flatMap(([env, allowed]) => [
    { command: `${env} echo hi`, allowed },
    { command: `echo hi; ${env} echo ho`, allowed }
  ]),
  { command: "PATH=/tmp", allowed: false },
  { command: "NODE_ENV=test", allowed: false },
  ...ECHOES.map(([command, allowed]) => ({ command, allowed }))
]
