/*
 * main.c -- the kforge program: the built-in families and the commands
 * (dispatch.c).
 */
#include "cmd.h"

int main(int argc, char **argv)
{
    return kforge_main(argc, argv);
}
