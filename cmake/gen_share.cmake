# Generates what `cmake --install` puts under share/: shell completions from
# `attn-explain completion bash|zsh|fish`, and the man page from --help (with help2man when it is
# installed, else a plain page that carries the same --help text).
# Run as: cmake -DEXE=<attn-explain> -DOUT=<dir> [-DHELP2MAN=<path>] -P gen_share.cmake
file(MAKE_DIRECTORY ${OUT}/bash-completion/completions ${OUT}/zsh/site-functions
                    ${OUT}/fish/vendor_completions.d ${OUT}/man/man1)
execute_process(COMMAND ${EXE} completion bash OUTPUT_FILE ${OUT}/bash-completion/completions/attn-explain
                RESULT_VARIABLE r1)
execute_process(COMMAND ${EXE} completion zsh OUTPUT_FILE ${OUT}/zsh/site-functions/_attn-explain RESULT_VARIABLE r2)
execute_process(COMMAND ${EXE} completion fish OUTPUT_FILE ${OUT}/fish/vendor_completions.d/attn-explain.fish
                RESULT_VARIABLE r3)
if(NOT (r1 EQUAL 0 AND r2 EQUAL 0 AND r3 EQUAL 0))
  message(FATAL_ERROR "attn-explain completion failed")
endif()
set(man ${OUT}/man/man1/attn-explain.1)
if(HELP2MAN)
  execute_process(COMMAND ${HELP2MAN} --no-info --no-discard-stderr
                          --name "learn scaled dot-product attention by watching it computed"
                          --output ${man} ${EXE} RESULT_VARIABLE r4)
endif()
if(NOT HELP2MAN OR NOT r4 EQUAL 0)
  execute_process(COMMAND ${EXE} --help OUTPUT_VARIABLE help RESULT_VARIABLE r5)
  execute_process(COMMAND ${EXE} --version OUTPUT_VARIABLE version OUTPUT_STRIP_TRAILING_WHITESPACE)
  string(REPLACE "\\" "\\\\" help "${help}")
  string(REGEX REPLACE "\n\\." "\n\\\\&." help "${help}")
  file(WRITE ${man} ".TH ATTN-EXPLAIN 1 \"\" \"${version}\" \"User Commands\"\n"
                    ".SH NAME\nattn-explain \\- learn scaled dot-product attention by watching it computed\n"
                    ".SH SYNOPSIS\n.B attn-explain\n\\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n"
                    ".SH DESCRIPTION\n.nf\n${help}.fi\n"
                    ".SH SEE ALSO\nattn-explain help COMMAND prints the options of one command.\n")
endif()
