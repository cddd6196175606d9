/* `visit` and `descend` call each other: their accesses are not summarized. */
struct node { double value; struct node *child; };

void descend(struct node *p);

void visit(struct node *p)
{
    p->value += 1.0;
    if (p->child)
        descend(p->child);
}

void descend(struct node *p)
{
    visit(p);
}

void visit_all(int n, struct node **nodes)
{
    for (int i = 0; i < n; i++) /* LOOP */
        visit(nodes[i]);
}
