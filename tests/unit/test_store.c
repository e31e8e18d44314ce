#include "../unit/check.h"
int main(void) { return check_done(); }
