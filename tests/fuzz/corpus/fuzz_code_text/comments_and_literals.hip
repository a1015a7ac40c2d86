// c
  int a; /* b
 c */ int d;
const char* s = "a//b /*c*/"; char q = '"';
#define X \
  y
