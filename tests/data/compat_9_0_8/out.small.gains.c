binG                  	all	0.1023
G                     	all	0.0832
ndcg_0=0,1=1,2=3      	all	0.1831
ndcg_rel              	all	0.1661
Rndcg                 	all	0.1181
