# Install rules and the Debian package (docs/install.md).
include(GNUInstallDirs)
# Installing (and cpack, through its preinstall step) takes what is built and builds nothing:
# scripts/setup.sh builds the CLI and the Python module, not the tests the `all` target holds.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY TRUE)
install(TARGETS xpusim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/data/ DESTINATION ${CMAKE_INSTALL_DATADIR}/xpusim)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples DESTINATION ${CMAKE_INSTALL_DATADIR}/xpusim)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs DESTINATION ${CMAKE_INSTALL_DATADIR}/xpusim)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DATADIR}/xpusim)
if(TARGET xpusim_python)
  # Debian's python3 reads lib/python3/dist-packages under its prefix (/usr, /usr/local).
  install(TARGETS xpusim_python LIBRARY DESTINATION lib/python3/dist-packages)
endif()

# `cpack -G DEB` in the build tree: xpusim_<version>_<arch>.deb, installed under /usr; the shared
# libraries it needs (yaml-cpp, protobuf, Open MPI when linked) become dependencies through
# dpkg-shlibdeps (package dpkg-dev).
set(CPACK_PACKAGE_NAME xpusim)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "xpusim developers <xpusim@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Simulator of AI accelerator systems (Trainium1-4, H100...GB300)")
set(CPACK_PACKAGE_DESCRIPTION "Predicts step time, throughput, latency, memory fit, energy and cost of training and serving real models on real systems, from one chip to a million, and searches the best plan.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
if(TARGET xpusim_python)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3")
endif()
set(CPACK_GENERATOR DEB)
include(CPack)
