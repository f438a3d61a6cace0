// The test executables' precompiled LibTorch header is made with this target's flags
// (tests/CMakeLists.txt); it runs nothing.
int main() { return 0; }
