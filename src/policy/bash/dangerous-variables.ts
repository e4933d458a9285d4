/**
 * The variables a script or a session may not set, because they change what commands run or load.
 * A module of its own, without the bash parser's types, so that the package's public declarations
 * (DANGEROUS_VARIABLES is public through policy/index.ts) never reach web-tree-sitter's, which
 * need @types/emscripten (TypeScript 7 reports "Cannot find name 'EmscriptenModule'").
 */
import { MODEL_VARIABLES } from "../commands/model.js";

/**
 * Variables whose value changes which program runs or what it loads (`PATH=. git status` runs
 * ./git; GCONV_PATH makes glibc's iconv load a workspace library, JAVA_TOOL_OPTIONS an agent,
 * GIT_TRACE2 appends to any file, OPENSSL_CONF loads providers into node; npm reads its
 * npm_config_* case-insensitively);
 * setting them anywhere makes the script opaque, and a session may not set them
 * (session/session-env.ts).
 */
const SHELL_AND_TOOL_VARIABLES =
  /^(PATH|LD_[A-Z0-9_]+|BASH_ENV|ENV|IFS|PROMPT_COMMAND|PS[0-4]|SHELLOPTS|BASHOPTS|CDPATH|GLOBIGNORE|BASH_[A-Z0-9_]+|GIT_[A-Z0-9_]*|PAGER|EDITOR|VISUAL|MANPAGER|LESSOPEN|LESSCLOSE|NODE_OPTIONS|NODE_PATH|PYTHONSTARTUP|PYTHONPATH|PYTHONHOME|PERL5OPT|PERL5LIB|RUBYOPT|RUSTC_WRAPPER|RUSTFLAGS|CARGO_[A-Z0-9_]+|GOFLAGS|GOPROXY|MAKEFLAGS|MAKEFILES|[Nn][Pp][Mm]_[Cc][Oo][Nn][Ff][Ii][Gg]_[A-Za-z0-9_]+|SSH_ASKPASS|SUDO_ASKPASS|RIPGREP_CONFIG_PATH|AWKPATH|AWKLIBPATH|TAR_OPTIONS|GREP_OPTIONS|JQ_LIBRARY_PATH|LESS|LESSKEY|SHELL|PYTHONINSPECT|PYTHONUSERBASE|XDG_CONFIG_HOME|HOME|PERLLIB|GCONV_PATH|LOCPATH|GLIBC_TUNABLES|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS|OPENSSL_CONF|OPENSSL_MODULES|POSIXLY_CORRECT|CURL_HOME|WGETRC|RUBYLIB|GOENV|GOTOOLCHAIN|BROWSER|PYTHONWARNINGS)$/;

/**
 * `test(name)`: true for a variable that changes what a command runs or loads: the shell's and
 * common tools' (the list above) and those the command model's tools read (MODEL_VARIABLES:
 * PYTEST_ADDOPTS, PYTEST_PLUGINS, MFLAGS…, each listed with its tool in ../commands/).
 */
export const DANGEROUS_VARIABLES: { test(name: string): boolean } = {
  test: (name) => SHELL_AND_TOOL_VARIABLES.test(name) || MODEL_VARIABLES.has(name),
};
