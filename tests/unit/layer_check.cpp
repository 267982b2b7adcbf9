// Linked with one layer (all of its objects) and the layers below it only:
// if the layer calls into a layer above, this fails to link.
int main() { return 0; }
