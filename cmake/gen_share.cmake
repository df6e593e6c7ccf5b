# Generates what `cmake --install` puts under share/: shell completions from
# `attn-explain completion bash|zsh|fish`, and the man page from --help (with help2man when it is
# installed, else a plain page that carries the same --help text), with a COMMANDS section holding
# `attn-explain help NAME` for every command of `attn-explain help --list` (the command registry).
# Run as: cmake -DEXE=<attn-explain> -DOUT=<dir> [-DHELP2MAN=<path>] -P gen_share.cmake
file(MAKE_DIRECTORY ${OUT}/bash-completion/completions ${OUT}/zsh/site-functions
                    ${OUT}/fish/vendor_completions.d ${OUT}/man/man1)
execute_process(COMMAND ${EXE} completion bash OUTPUT_FILE ${OUT}/bash-completion/completions/attn-explain
                RESULT_VARIABLE r1)
execute_process(COMMAND ${EXE} completion zsh OUTPUT_FILE ${OUT}/zsh/site-functions/_attn-explain RESULT_VARIABLE r2)
execute_process(COMMAND ${EXE} completion fish OUTPUT_FILE ${OUT}/fish/vendor_completions.d/attn-explain.fish
                RESULT_VARIABLE r3)
execute_process(COMMAND ${EXE} help --list OUTPUT_VARIABLE names RESULT_VARIABLE r0)
if(NOT (r0 EQUAL 0 AND r1 EQUAL 0 AND r2 EQUAL 0 AND r3 EQUAL 0))
  message(FATAL_ERROR "attn-explain completion or help --list failed")
endif()

# Text as roff: backslashes doubled, a line starting with a dot or a quote kept as text.
function(roff_text var text)
  string(REPLACE "\\" "\\\\" text "${text}")
  string(REGEX REPLACE "\n([.'])" "\n\\\\&\\1" text "${text}")
  set(${var} "${text}" PARENT_SCOPE)
endfunction()

# One subsection per registered command, its help as printed.
string(REGEX REPLACE "\n$" "" names "${names}")
string(REPLACE "\n" ";" names "${names}")
set(commands "")
foreach(name ${names})
  execute_process(COMMAND ${EXE} help ${name} OUTPUT_VARIABLE text RESULT_VARIABLE r)
  if(NOT r EQUAL 0)
    message(FATAL_ERROR "attn-explain help ${name} failed")
  endif()
  roff_text(text "${text}")
  string(APPEND commands ".SS \"attn-explain ${name}\"\n.nf\n${text}.fi\n")
endforeach()

set(man ${OUT}/man/man1/attn-explain.1)
if(HELP2MAN)
  set(include ${OUT}/man/commands.h2m)
  file(WRITE ${include} "[COMMANDS]\n${commands}")
  execute_process(COMMAND ${HELP2MAN} --no-info --no-discard-stderr
                          --name "learn scaled dot-product attention by watching it computed"
                          --include ${include} --output ${man} ${EXE} RESULT_VARIABLE r4)
  file(REMOVE ${include})
endif()
if(NOT HELP2MAN OR NOT r4 EQUAL 0)
  execute_process(COMMAND ${EXE} --help OUTPUT_VARIABLE help RESULT_VARIABLE r5)
  execute_process(COMMAND ${EXE} --version OUTPUT_VARIABLE version OUTPUT_STRIP_TRAILING_WHITESPACE)
  roff_text(help "${help}")
  file(WRITE ${man} ".TH ATTN-EXPLAIN 1 \"\" \"${version}\" \"User Commands\"\n"
                    ".SH NAME\nattn-explain \\- learn scaled dot-product attention by watching it computed\n"
                    ".SH SYNOPSIS\n.B attn-explain\n\\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n"
                    ".SH DESCRIPTION\n.nf\n${help}.fi\n"
                    ".SH COMMANDS\n${commands}"
                    ".SH SEE ALSO\nattn-explain help COMMAND prints the options of one command.\n")
endif()
