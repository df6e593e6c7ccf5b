# Generates what `cmake --install` puts under share/: shell completions from
# `attn-explain completion bash|zsh|fish`; one man page per command, attn-explain-NAME(1), from
# `attn-explain help NAME --format man` (its help page: lib/attn/doc/help.cpp), in English under
# man/man1 and in every other language of the lessons under man/<locale>/man1; and the program's
# own page attn-explain(1) from --help (with help2man when it is installed, else a plain page that
# carries the same text) with a COMMANDS section naming each command's page.
# Run as: cmake -DEXE=<attn-explain> -DOUT=<dir> [-DHELP2MAN=<path>] -P gen_share.cmake
file(MAKE_DIRECTORY ${OUT}/bash-completion/completions ${OUT}/zsh/vendor-completions
                    ${OUT}/fish/vendor_completions.d ${OUT}/man/man1)
# The pages must not depend on the environment of the build (--lang's default comes from it).
set(ENV{ATTN_EXPLAIN_LANG} "en")
set(ENV{COLUMNS} "80")
execute_process(COMMAND ${EXE} completion bash OUTPUT_FILE ${OUT}/bash-completion/completions/attn-explain
                RESULT_VARIABLE r1)
execute_process(COMMAND ${EXE} completion zsh OUTPUT_FILE ${OUT}/zsh/vendor-completions/_attn-explain RESULT_VARIABLE r2)
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

# The languages other than English, and the man directory of each (zh -> zh_CN).
set(locales "zh=zh_CN")
string(REGEX REPLACE "\n$" "" names "${names}")
string(REPLACE "\n" ";" names "${names}")
set(commands "")
foreach(name ${names})
  execute_process(COMMAND ${EXE} help ${name} --format man --lang en OUTPUT_FILE ${OUT}/man/man1/attn-explain-${name}.1
                  RESULT_VARIABLE r ERROR_VARIABLE err)
  if(NOT r EQUAL 0)
    message(FATAL_ERROR "attn-explain help ${name} --format man failed: ${err}")
  endif()
  foreach(pair ${locales})
    string(REPLACE "=" ";" pair "${pair}")
    list(GET pair 0 lang)
    list(GET pair 1 locale)
    file(MAKE_DIRECTORY ${OUT}/man/${locale}/man1)
    execute_process(COMMAND ${EXE} help ${name} --format man --lang ${lang}
                    OUTPUT_FILE ${OUT}/man/${locale}/man1/attn-explain-${name}.1 RESULT_VARIABLE r ERROR_VARIABLE err)
    if(NOT r EQUAL 0)
      message(FATAL_ERROR "attn-explain help ${name} --format man --lang ${lang} failed: ${err}")
    endif()
  endforeach()
  execute_process(COMMAND ${EXE} ${name} --help OUTPUT_VARIABLE text)
  string(REGEX MATCH "^[^\n]*" summary "${text}")
  roff_text(summary "${summary}")
  string(APPEND commands ".TP\n.B attn\\-explain ${name}\n${summary}: see \\fBattn\\-explain\\-${name}\\fR(1).\n")
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
                    ".SH SEE ALSO\nattn-explain help COMMAND prints the page of one command.\n")
endif()
file(WRITE ${OUT}/man/.stamp "")
