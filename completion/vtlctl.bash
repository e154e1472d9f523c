# SPDX-License-Identifier: Apache-2.0
# bash completion for vtlctl (installed as bash-completion/completions/vtlctl). The commands come
# from `vtlctl --help` and each command's options from `vtlctl help COMMAND`, so the completion
# always knows what the installed vtlctl knows.

# The commands vtlctl lists, one a line ("cartridge add").
_vtlctl_commands() {
	"$1" --help 2>/dev/null | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z]*\( [a-z][a-z]*\)\{0,1\}\)  .*/\1/p'
}

_vtlctl() {
	local prog=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]} prev=
	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD-1]}
	COMPREPLY=()
	case $prev in
	-c | --config)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	esac
	# The command words typed so far: options and the value of -c left out.
	local words=() i=1
	while [ "$i" -lt "$COMP_CWORD" ]; do
		case ${COMP_WORDS[i]} in
		-c | --config) i=$((i + 1)) ;;
		-*) ;;
		*) words+=("${COMP_WORDS[i]}") ;;
		esac
		i=$((i + 1))
	done
	local cmds global="-c --config --json -h --help"
	cmds=$(_vtlctl_commands "$prog")
	local cmd=
	if [ "${#words[@]}" -ge 2 ] && printf '%s\n' "$cmds" | grep -qx -- "${words[0]} ${words[1]}"; then
		cmd="${words[0]} ${words[1]}"
	elif [ "${#words[@]}" -ge 1 ] && printf '%s\n' "$cmds" | grep -qx -- "${words[0]}"; then
		cmd=${words[0]}
	fi
	if [ -n "$cmd" ]; then
		# A whole command: its options, from the first line of its help (its usage).
		local opts
		opts=$("$prog" help $cmd 2>/dev/null | head -n 1 | grep -o -- '--[a-z][a-z-]*' | sort -u)
		COMPREPLY=($(compgen -W "$(printf '%s\n' $opts $global | sort -u)" -- "$cur"))
	elif [ "${#words[@]}" -eq 1 ]; then
		# The second word of a two-word command ("cartridge a" -> add).
		COMPREPLY=($(compgen -W "$(printf '%s\n' "$cmds" | sed -n "s/^${words[0]} //p")" -- "$cur"))
	elif [ "${#words[@]}" -eq 0 ]; then
		case $cur in
		-*) COMPREPLY=($(compgen -W "$global" -- "$cur")) ;;
		*) COMPREPLY=($(compgen -W "$(printf '%s\n' "$cmds" | cut -d' ' -f1 | sort -u)" -- "$cur")) ;;
		esac
	fi
}
complete -F _vtlctl vtlctl
