/*
 * Linked with every object of perfgate_core (whole archive) and nothing but
 * jansson and libm (CMakeLists.txt): the build fails when a pure file calls
 * curl, libyaml, libgit2 or an *_io.c function. Running it proves nothing
 * more; the link is the check.
 */
int main(void)
{
	return 0;
}
